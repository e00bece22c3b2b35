// Sessions view: every session, newest first, from /api/sessions (?project= filters, and
// is kept in the URL). "Load more" follows the API's cursor; a row links to the session's
// timeline and has a delete button (the whole session, after a confirmation).
"use strict";

(() => {
  const { api, el, when, deleteButton, projectFilter } = memlite;
  const params = new URLSearchParams(window.location.search);
  let project = params.get("project") || "";
  let next = null;
  let generation = 0;
  let body, more, empty, select;

  function excerpt(summary) {
    if (!summary) return el("span", { class: "note" }, "no summary yet");
    const text = [summary.request, summary.completed || summary.learned]
      .filter(Boolean).join(" — ");
    return el("span", { title: text }, text.length > 160 ? `${text.slice(0, 157)}…` : text);
  }

  function row(session) {
    const name = session.project_name || (session.project || "").split("/").filter(Boolean).pop();
    return el("tr", { "data-session": session.id, "data-testid": "session-row" },
      el("td", { "data-label": "Session" },
        el("a", { href: `/sessions/${encodeURIComponent(session.id)}`,
                  "data-testid": "session-link" }, String(session.id).slice(0, 16)),
        session.branch ? el("div", { class: "note" }, session.branch) : null),
      el("td", { "data-label": "Project", title: session.project || "" }, name || "—"),
      el("td", { "data-label": "Started" },
        el("time", { datetime: session.started_at }, when(session.started_at))),
      el("td", { "data-label": "Status" }, session.completed_at
        ? el("time", { datetime: session.completed_at }, `ended ${when(session.completed_at)}`)
        : session.status),
      el("td", { "data-label": "Counts", "data-testid": "session-counts" },
        `${session.prompt_count} prompts · ${session.observations} observations · ` +
        `${session.summaries} summaries`),
      el("td", { "data-label": "Summary", class: "excerpt" }, excerpt(session.summary)),
      el("td", {}, deleteButton("session", session.id, String(session.id).slice(0, 16))));
  }

  async function load(reset) {
    const mine = reset ? ++generation : generation;
    if (reset) next = null;
    const q = new URLSearchParams();
    if (project) q.set("project", project);
    if (next) q.set("before", next);
    more.disabled = true;
    try {
      const found = await api(`/api/sessions?${q}`);
      if (mine !== generation) return;
      if (reset) body.replaceChildren();
      body.append(...found.sessions.map(row));
      next = found.next;
    } catch (error) {
      memlite.toast(`Could not load sessions: ${error.message}`, "error");
    } finally {
      if (mine === generation) {
        more.disabled = false;
        more.hidden = !next;
        update();
      }
    }
  }

  function update() {
    empty.hidden = body.children.length > 0;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const view = document.getElementById("view");
    select = projectFilter("sessions-project", project, (chosen) => {
      project = chosen;
      load(true);
    });
    body = el("tbody", { "data-testid": "sessions-body" });
    more = el("button", { type: "button", class: "ghost", hidden: true,
                          "data-testid": "sessions-more", onclick: () => load(false) },
              "Load more");
    empty = el("p", { class: "empty", "data-testid": "sessions-empty", hidden: true },
               "No sessions recorded yet.");
    const head = el("thead", {}, el("tr", {},
      ...["Session", "Project", "Started", "Status", "Counts", "Summary", ""].map(
        (title) => el("th", { scope: "col" }, title))));
    view.replaceChildren(
      el("div", { class: "toolbar" }, el("label", { for: "sessions-project" }, "Project", select)),
      el("table", { class: "sessions responsive" }, head, body), empty, more);
    document.addEventListener("memlite:deleted", (event) => {
      const { kind, id } = event.detail || {};
      if (kind !== "session") return;
      for (const tr of body.querySelectorAll(`tr[data-session="${CSS.escape(String(id))}"]`)) {
        tr.remove();
      }
      update();
    });
    load(true);
  });
})();

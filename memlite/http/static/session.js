// Session view (/sessions/<id>): the session's whole timeline from /api/sessions/<id>:
// prompts, observations (superseded ones too, marked) and summaries in time order, each
// with a delete button; deleting the session itself goes back to /sessions.
"use strict";

(() => {
  const { api, el, when, observationCard, summaryCard, deleteButton } = memlite;
  const ORDER = { prompt: 0, observation: 1, summary: 2 };  // same millisecond: this order

  function promptCard(prompt) {
    const text = prompt.prompt_text;
    return el("article", { class: "card prompt", "data-kind": "prompt", "data-id": prompt.id,
                           "data-testid": "prompt-card" },
      el("header", {},
        el("span", { class: "badge type-prompt" }, `prompt ${prompt.prompt_number}`),
        el("p", { class: "title prompt-text" }, text || "(private prompt: not stored)")),
      el("footer", { class: "meta" },
        el("time", { datetime: prompt.created_at }, when(prompt.created_at))));
  }

  function observationItem(obs) {
    const node = observationCard(obs);
    if (obs.superseded) {
      node.classList.add("superseded");
      node.append(el("p", { class: "note", "data-testid": "superseded-note" },
                     `Superseded by #${obs.superseded_by}`));
    }
    return node;
  }

  function header(session) {
    const fact = (label, value) => value ? el("div", {},
      el("dt", {}, label), el("dd", {}, value)) : null;
    return el("section", { class: "card session-head", "data-testid": "session-head" },
      el("header", {},
        el("h2", { class: "title" }, session.project_name || session.project || "(no project)"),
        deleteButton("session", session.id, String(session.id).slice(0, 16))),
      el("dl", { class: "facts" },
        fact("Session", session.id),
        fact("Project", session.project),
        fact("Branch", session.branch),
        fact("Started", when(session.started_at)),
        fact("Ended", session.completed_at ? when(session.completed_at) : null),
        fact("Status", session.status),
        fact("Recorded", `${session.prompt_count} prompts · ${session.observations} ` +
             `observations · ${session.summaries} summaries`)));
  }

  function timeline(found) {
    const items = [
      ...found.prompts.map((row) => ({ kind: "prompt", row })),
      ...found.observations.map((row) => ({ kind: "observation", row })),
      ...found.summaries.map((row) => ({ kind: "summary", row })),
    ];
    items.sort((a, b) => (a.row.created_at_epoch - b.row.created_at_epoch) ||
                         (ORDER[a.kind] - ORDER[b.kind]) || (a.row.id - b.row.id));
    const build = { prompt: promptCard, observation: observationItem, summary: summaryCard };
    return items.map(({ kind, row }) => build[kind](row));
  }

  document.addEventListener("DOMContentLoaded", async () => {
    const view = document.getElementById("view");
    const id = view.dataset.session;
    let found;
    try {
      found = await api(`/api/sessions/${encodeURIComponent(id)}`);
    } catch (error) {
      view.replaceChildren(el("p", { class: error.status === 404 ? "empty" : "error",
                                     "data-testid": "session-missing" },
        error.status === 404 ? `No session ${id}: it was never recorded or has been deleted.`
                             : `Could not load the session: ${error.message}`),
        el("a", { href: "/sessions" }, "All sessions"));
      return;
    }
    const cards = el("div", { class: "cards timeline", "data-testid": "session-timeline" },
                     timeline(found));
    const empty = el("p", { class: "empty", "data-testid": "session-empty" },
                     "Nothing recorded in this session yet.");
    empty.hidden = cards.children.length > 0;
    view.replaceChildren(header(found.session), el("h2", {}, "Timeline"), empty, cards);
    document.addEventListener("memlite:deleted", (event) => {
      const { kind, id: deleted } = event.detail || {};
      if (kind === "session" && String(deleted) === String(id)) {
        window.location.assign("/sessions");
        return;
      }
      for (const node of cards.querySelectorAll(
        `article.card[data-kind="${CSS.escape(kind)}"][data-id="${CSS.escape(String(deleted))}"]`)) {
        node.remove();
      }
      empty.hidden = cards.children.length > 0;
    });
  });
})();

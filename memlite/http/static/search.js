// Search view: the form's state lives in the URL (/search?q=...&mode=...), so a search is
// a link and Back/Forward replay it. Results are built with memlite.el (textContent only).
"use strict";

(() => {
  const { api, el, observationCard, summaryCard, when, projects } = memlite;
  const FIELDS = ["q", "mode", "project", "type", "since", "until", "file", "session"];
  let form, view;
  let latest = 0;  // only the newest request may draw

  function projectValue(item) {
    if (typeof item === "string") return item;
    return item && (item.project || item.path || item.name) || "";
  }

  function fromUrl() {
    const params = new URLSearchParams(window.location.search);
    for (const name of FIELDS) {
      const field = form.elements[name];
      let value = params.get(name) || "";
      if (field.tagName === "SELECT" && value &&
          ![...field.options].some((o) => o.value === value)) {
        field.append(el("option", { value }, value));  // a linked project not in the list
      }
      if (name === "mode" && !value) value = "hybrid";
      field.value = value;
    }
    return params;
  }

  function toParams() {
    const params = new URLSearchParams();
    for (const name of FIELDS) {
      const value = String(form.elements[name].value || "").trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  function scoreLine(obs, modeUsed) {
    const parts = [`score ${Number(obs.score).toFixed(4)}`, `mode ${modeUsed}`];
    if (obs.fts_rank !== null && obs.fts_rank !== undefined) parts.push(`full text #${obs.fts_rank}`);
    if (obs.vector_rank !== null && obs.vector_rank !== undefined) {
      parts.push(`vector #${obs.vector_rank}`);
    }
    return el("p", { class: "note score", "data-testid": "score-line" }, parts.join(" · "));
  }

  function promptItem(prompt) {
    return el("article", { class: "card prompt", "data-testid": "prompt-card" },
      el("p", { class: "narrative" }, prompt.prompt_text),
      el("footer", { class: "meta" },
        el("span", {}, `prompt ${prompt.prompt_number}`),
        el("a", { href: `/sessions/${encodeURIComponent(prompt.session_id)}` },
           `session ${String(prompt.session_id).slice(0, 12)}`),
        el("time", { datetime: prompt.created_at }, when(prompt.created_at))));
  }

  function section(title, testid, items, build) {
    if (!items.length) return null;
    return el("section", { "data-testid": testid },
      el("h2", {}, `${title} (${items.length})`),
      el("div", { class: "cards" }, items.map(build)));
  }

  function draw(found) {
    const observations = found.observations || [];
    const summaries = found.summaries || [];
    const prompts = found.prompts || [];
    const total = observations.length + summaries.length + prompts.length;
    view.replaceChildren(...[
      el("p", { class: "note", "data-testid": "search-status" },
        `${observations.length} observations, ${summaries.length} summaries, ` +
        `${prompts.length} prompts · mode asked ${found.mode} · mode used `,
        el("b", { "data-testid": "mode-used" }, found.mode_used)),
      found.note ? el("p", { class: "note", role: "note", "data-testid": "search-note" },
                      `Note: ${found.note}`) : null,
      total ? null : el("p", { class: "empty", "data-testid": "search-empty" },
                        "Nothing matches this search."),
      section("Observations", "search-observations", observations, (obs) => {
        const card = observationCard(obs);
        card.append(scoreLine(obs, found.mode_used));
        return card;
      }),
      section("Summaries", "search-summaries", summaries, summaryCard),
      section("Prompts", "search-prompts", prompts, promptItem)].filter(Boolean));
  }

  function showError(message) {
    view.replaceChildren(el("p", { class: "error", role: "alert", "data-testid": "search-error" },
                            message));
  }

  async function run(params) {
    const ticket = ++latest;
    if (!params.get("q")) {
      view.replaceChildren(el("p", { class: "empty", "data-testid": "search-hint" },
        "Type a query and press Enter. Filters narrow the observations."));
      return;
    }
    view.replaceChildren(el("p", { class: "note", "data-testid": "search-busy" }, "Searching…"));
    try {
      const found = await api(`/api/search?${params}`);
      if (ticket === latest) draw(found);
    } catch (error) {
      if (ticket === latest) showError(`Search failed: ${error.message}`);
    }
  }

  async function fillProjects() {
    const select = form.elements.project;
    const chosen = select.value;
    for (const item of await projects()) {
      const value = projectValue(item);
      if (!value || [...select.options].some((o) => o.value === value)) continue;
      select.append(el("option", { value }, value));
    }
    select.value = chosen;
  }

  document.addEventListener("DOMContentLoaded", async () => {
    form = document.getElementById("search-form");
    view = document.getElementById("view");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const params = toParams();
      const url = `/search${params.toString() ? "?" + params : ""}`;
      if (url !== window.location.pathname + window.location.search) {
        history.pushState(null, "", url);
      }
      run(params);
    });
    window.addEventListener("popstate", () => run(fromUrl()));
    document.addEventListener("memlite:deleted", (event) => {
      const { kind, id } = event.detail;
      for (const card of view.querySelectorAll(`[data-kind="${kind}"]`)) {
        if (card.dataset.id === String(id)) card.remove();
      }
    });
    await fillProjects();
    const params = fromUrl();
    form.dataset.ready = "1";
    run(params);
    if (!params.get("q")) form.elements.q.focus();
  });
})();

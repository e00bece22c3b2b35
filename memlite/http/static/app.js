// memlite dashboard: shared helpers. Data is put in the page with textContent and
// setAttribute only (never innerHTML), so stored text can never become markup.
"use strict";

const memlite = (() => {
  async function api(path, options = {}) {
    const init = { method: options.method || "GET", credentials: "same-origin", headers: {} };
    if (options.body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.body);
    }
    const response = await fetch(path, init);
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (!response.ok) {
      const message = data && data.error ? data.error : `HTTP ${response.status}`;
      const error = new Error(message);
      error.status = response.status;
      throw error;
    }
    return data;
  }

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on") && typeof value === "function") {
        node.addEventListener(name.slice(2), value);
      } else {
        node.setAttribute(name, value === true ? "" : String(value));
      }
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function when(iso) {
    if (!iso) return "";
    const date = new Date(iso);
    return isNaN(date) ? String(iso) : date.toLocaleString();
  }

  function toast(message, kind) {
    const box = document.getElementById("toast");
    if (!box) return;
    box.textContent = message;
    box.className = "show " + (kind || "");
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.className = ""; }, 4000);
  }

  function list(title, items, testid) {
    if (!items || !items.length) return null;
    return el("div", { class: "list", "data-testid": testid },
      el("span", { class: "label" }, title),
      el("ul", {}, items.map((item) => el("li", {}, item))));
  }

  async function confirmDelete(kind, id, label) {
    const what = { observation: "observation", summary: "summary", session: "session" }[kind];
    const path = { observation: "/api/observations/", summary: "/api/summaries/",
                   session: "/api/sessions/" }[kind] + encodeURIComponent(id);
    const extra = kind === "session" ? " and everything recorded in it" : "";
    if (!window.confirm(`Delete ${what} ${label || id}${extra}? This cannot be undone.`)) {
      return false;
    }
    try {
      await api(path, { method: "DELETE" });
      toast(`Deleted ${what} ${label || id}`);
      document.dispatchEvent(new CustomEvent("memlite:deleted", { detail: { kind, id } }));
      loadStats();
      return true;
    } catch (error) {
      toast(`Could not delete: ${error.message}`, "error");
      return false;
    }
  }

  function deleteButton(kind, id, label) {
    return el("button", {
      type: "button", class: "danger small", "data-testid": `delete-${kind}`,
      "aria-label": `Delete ${kind} ${label || id}`,
      onclick: () => confirmDelete(kind, id, label),
    }, "Delete");
  }

  function observationCard(obs) {
    const files = [...new Set([...(obs.files_modified || [])])];
    return el("article", { class: "card observation", "data-id": obs.id,
                           "data-kind": "observation", "data-testid": "observation-card" },
      el("header", {},
        el("span", { class: `badge type-${obs.type}`, "data-testid": "type-badge" }, obs.type),
        el("h3", { class: "title" }, obs.title),
        deleteButton("observation", obs.id, `#${obs.id}`)),
      obs.subtitle ? el("p", { class: "subtitle" }, obs.subtitle) : null,
      obs.narrative ? el("p", { class: "narrative" }, obs.narrative) : null,
      list("Facts", obs.facts, "facts"),
      list("Files read", obs.files_read, "files-read"),
      list("Files modified", files, "files-modified"),
      el("footer", { class: "meta" },
        el("span", {}, `#${obs.id}`),
        el("a", { href: `/sessions/${encodeURIComponent(obs.session_id)}` },
           `session ${String(obs.session_id).slice(0, 12)}`),
        el("span", { class: "project" }, obs.project),
        el("time", { datetime: obs.created_at }, when(obs.created_at))));
  }

  function summaryCard(summary) {
    const part = (title, text) => text ? el("div", { class: "part" },
      el("span", { class: "label" }, title), el("p", {}, text)) : null;
    return el("article", { class: "card summary", "data-id": summary.id,
                           "data-kind": "summary", "data-testid": "summary-card" },
      el("header", {},
        el("span", { class: "badge type-summary" }, "summary"),
        el("h3", { class: "title" }, summary.request || "Session summary"),
        deleteButton("summary", summary.id, `#${summary.id}`)),
      part("Investigated", summary.investigated),
      part("Learned", summary.learned),
      part("Completed", summary.completed),
      part("Next steps", summary.next_steps),
      el("footer", { class: "meta" },
        el("a", { href: `/sessions/${encodeURIComponent(summary.session_id)}` },
           `session ${String(summary.session_id).slice(0, 12)}`),
        el("span", { class: "project" }, summary.project),
        el("time", { datetime: summary.created_at }, when(summary.created_at))));
  }

  function sparkline(values) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const width = 70, height = 18, max = Math.max(1, ...values);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("class", "spark");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `observations per day, last ${values.length} days: ` +
                     values.join(", "));
    const step = values.length > 1 ? width / (values.length - 1) : width;
    const points = values.map((v, i) => `${(i * step).toFixed(1)},` +
                                        `${(height - 1 - (v / max) * (height - 2)).toFixed(1)}`);
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points.join(" "));
    svg.append(line);
    return svg;
  }

  function duration(seconds) {
    if (seconds < 90) return `${Math.round(seconds)} s`;
    if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
    return `${(seconds / 3600).toFixed(1)} h`;
  }

  function quarantine(spool) {
    // Spooled hook events the worker could not ingest: kept with their reason (issue 13).
    if (!spool || !spool.quarantined) return [];
    const n = spool.quarantined;
    const latest = spool.latest || {};
    const where = (spool.files || []).join(", ");
    return [el("span", { class: "stat health bad", "data-testid": "spool-quarantine",
                         title: `newest: ${latest.event || "?"}: ${latest.reason || "?"}` +
                                (where ? ` (kept in ${where}; see memlite doctor)` : "") },
               `${n} event${n === 1 ? "" : "s"} quarantined`)];
  }

  async function loadStats() {
    const bar = document.getElementById("stats");
    if (!bar || document.body.dataset.page === "signin") return;
    try {
      const s = await api("/api/stats");
      const item = (label, value, testid) => el("span", { class: "stat", "data-testid": testid },
        el("b", {}, String(value)), ` ${value === 1 ? label.replace(/s$/, "") : label}`);
      const types = Object.entries(s.types || {}).map(([t, n]) => `${t} ${n}`).join(" · ");
      bar.replaceChildren(
        item("sessions", s.sessions, "stat-sessions"),
        item("observations", s.observations, "stat-observations"),
        item("summaries", s.summaries, "stat-summaries"),
        item("projects", s.projects, "stat-projects"),
        el("span", { class: "stat types", title: "observations by type" }, types),
        el("span", { class: "stat" }, sparkline((s.activity || []).map((d) => d.observations)),
           " 7 days"),
        el("span", { class: "stat" }, `up ${duration(s.uptime_seconds || 0)}`),
        el("span", { class: `stat health ${s.observer && s.observer.ok ? "ok" : "bad"}`,
                     "data-testid": "observer-health",
                     title: (s.observer && s.observer.line) || "" },
           s.observer && s.observer.ok ? "observer ok" : "observer: " +
           ((s.observer && s.observer.line) || "unknown")),
        ...quarantine(s.spool));
    } catch (error) {
      bar.replaceChildren(el("span", { class: "stat" }, `stats unavailable: ${error.message}`));
    }
  }

  function stream(handlers) {
    // The worker's SSE stream (/api/stream): named events ("observation", "summary",
    // "event", ...) whose data is one JSON object. handlers: {name: fn(object)}.
    const source = new EventSource("/api/stream");
    for (const [name, handle] of Object.entries(handlers)) {
      source.addEventListener(name, (message) => {
        let data = null;
        try { data = JSON.parse(message.data); } catch (_) { return; }
        handle(data);
      });
    }
    return source;
  }

  function theme() {
    const root = document.documentElement;
    const saved = localStorage.getItem("memlite-theme");
    if (saved === "light" || saved === "dark") root.dataset.theme = saved;
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    const label = () => {
      const dark = root.dataset.theme === "dark" || (root.dataset.theme === "auto" &&
        window.matchMedia("(prefers-color-scheme: dark)").matches);
      button.textContent = dark ? "Light theme" : "Dark theme";
      return dark;
    };
    label();
    button.addEventListener("click", () => {
      root.dataset.theme = label() ? "light" : "dark";
      localStorage.setItem("memlite-theme", root.dataset.theme);
      label();
    });
  }

  async function projects() {
    try { return (await api("/api/projects")).projects || []; } catch (_) { return []; }
  }

  function projectFilter(id, current, onChange) {
    // A project <select> ("All projects" + every project), kept in the URL's ?project=.
    // Returns the element; onChange(project) runs after each choice.
    const select = el("select", { id, "data-testid": "project-filter" });
    projects().then((found) => {
      const values = found.map((p) => p.project);
      if (current && !values.includes(current)) values.push(current);
      select.replaceChildren(el("option", { value: "" }, "All projects"),
        ...values.map((value) => {
          const info = found.find((p) => p.project === value);
          return el("option", { value }, info ? `${info.name} (${value})` : value);
        }));
      select.value = current;
    });
    select.addEventListener("change", () => {
      const url = new URL(window.location.href);
      if (select.value) url.searchParams.set("project", select.value);
      else url.searchParams.delete("project");
      history.replaceState(null, "", url);
      onChange(select.value);
    });
    return select;
  }

  document.addEventListener("DOMContentLoaded", () => { theme(); loadStats(); });

  return { api, el, when, toast, list, confirmDelete, deleteButton, observationCard,
           summaryCard, loadStats, stream, projects, projectFilter };
})();

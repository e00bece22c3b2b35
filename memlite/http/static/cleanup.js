// Cleanup: review a project's observations (rules or AI), then delete the ticked ones.
// The review is a POST answered as text/event-stream, read with fetch() and a stream
// reader (EventSource cannot POST). Rows are built with textContent only.
"use strict";

(() => {
  const { api, el, toast, projects, loadStats } = memlite;
  const rows = new Map();  // id -> {row, box, verdict, reason}

  function parseBlock(block) {
    let name = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) name = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (!data) return null;
    try { return [name, JSON.parse(data)]; } catch (_) { return null; }
  }

  async function readStream(response, handle) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const parsed = parseBlock(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (parsed) handle(parsed[0], parsed[1]);
      }
    }
  }

  function build() {
    const view = document.getElementById("view");
    const project = el("input", { id: "cleanup-project", list: "cleanup-projects",
                                  "data-testid": "cleanup-project", required: true,
                                  placeholder: "/path/to/project", size: 40 });
    const options = el("datalist", { id: "cleanup-projects" });
    const mode = el("select", { id: "cleanup-mode", "data-testid": "cleanup-mode" },
      el("option", { value: "auto" }, "auto (AI when available)"),
      el("option", { value: "ai" }, "AI"),
      el("option", { value: "rules" }, "rules"));
    const review = el("button", { type: "submit", "data-testid": "cleanup-review" }, "Review");
    const apply = el("button", { type: "button", class: "danger", disabled: true,
                                 "data-testid": "cleanup-apply" }, "Delete selected");
    const status = el("p", { class: "status", role: "status", "data-testid": "cleanup-status" });
    const table = el("table", { class: "cleanup", "data-testid": "cleanup-table" },
      el("thead", {}, el("tr", {}, el("th", {}, "Delete"), el("th", {}, "#"),
        el("th", {}, "Type"), el("th", {}, "Title"), el("th", {}, "Verdict"),
        el("th", {}, "Reason"))));
    const body = el("tbody", {});
    table.append(body);
    const form = el("form", { class: "toolbar", "data-testid": "cleanup-form" },
      el("label", { for: "cleanup-project" }, "Project "), project, options,
      el("label", { for: "cleanup-mode" }, " Mode "), mode, " ", review, " ", apply);
    view.replaceChildren(form, status, table);

    projects().then((list) => {
      const names = list.map((p) => typeof p === "string" ? p : (p.project || p.path))
                        .filter(Boolean);
      options.replaceChildren(...names.map((name) => el("option", { value: name })));
      if (!project.value && names.length) project.value = names[0];
    });

    const selected = () => [...rows.entries()].filter(([, r]) => r.box.checked)
                                              .map(([id]) => id);
    const refresh = () => {
      const n = selected().length;
      apply.disabled = n === 0;
      apply.textContent = n ? `Delete selected (${n})` : "Delete selected";
    };

    function onEvent(name, data) {
      if (name === "start") {
        status.textContent = `Reviewing ${data.candidates} observations of ${data.project} ` +
                             `by ${data.by}…`;
      } else if (name === "pending") {
        const box = el("input", { type: "checkbox", disabled: true,
                                  "aria-label": `Delete observation #${data.id}`,
                                  "data-testid": "cleanup-tick", onchange: refresh });
        const verdict = el("td", { class: "verdict", "data-testid": "cleanup-verdict" },
                           "pending");
        const reason = el("td", { class: "reason" }, "");
        const row = el("tr", { "data-id": data.id, "data-testid": "cleanup-row",
                               class: "pending" },
          el("td", {}, box), el("td", {}, `#${data.id}`),
          el("td", {}, el("span", { class: `badge type-${data.type}` }, data.type)),
          el("td", {}, data.title), verdict, reason);
        rows.set(data.id, { row, box, verdict, reason });
        body.append(row);
      } else if (name === "verdict") {
        const r = rows.get(data.id);
        if (!r) return;
        r.verdict.textContent = `${data.verdict} (${data.by})`;
        r.reason.textContent = data.reason;
        r.row.className = data.verdict === "DELETE" ? "delete" : "keep";
        r.box.disabled = false;
        r.box.checked = data.verdict === "DELETE";
        refresh();
      } else if (name === "notice") {
        toast(data.message);
        status.textContent += ` ${data.message}.`;
      } else if (name === "error") {
        status.textContent = `Review stopped: ${data.message}`;
        toast(data.message, "error");
      } else if (name === "done") {
        status.textContent = `Reviewed ${data.reviewed} by ${data.by}: ${data.delete} to ` +
                             `delete, ${data.keep} to keep.`;
        status.dataset.done = "true";
      }
    }

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      rows.clear();
      body.replaceChildren();
      delete status.dataset.done;
      refresh();
      review.disabled = true;
      status.textContent = "Starting the review…";
      try {
        const response = await fetch("/api/cleanup/review", {
          method: "POST", credentials: "same-origin",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ project: project.value.trim(), mode: mode.value }),
        });
        if (!response.ok) {
          let message = `HTTP ${response.status}`;
          try { message = (await response.json()).error || message; } catch (_) { /* */ }
          throw new Error(message);
        }
        await readStream(response, onEvent);
      } catch (error) {
        status.textContent = `Review failed: ${error.message}`;
        toast(`Review failed: ${error.message}`, "error");
      } finally {
        review.disabled = false;
      }
    });

    apply.addEventListener("click", async () => {
      const ids = selected();
      if (!ids.length) return;
      if (!window.confirm(`Delete ${ids.length} observation${ids.length === 1 ? "" : "s"}? ` +
                          "This cannot be undone.")) return;
      try {
        const result = await api("/api/cleanup/apply", { method: "POST", body: { ids } });
        for (const id of [...result.deleted, ...result.missing]) {
          const r = rows.get(id);
          if (r) { r.row.remove(); rows.delete(id); }
        }
        refresh();
        toast(`Deleted ${result.deleted.length} observation` +
              `${result.deleted.length === 1 ? "" : "s"}`);
        loadStats();
      } catch (error) {
        toast(`Could not delete: ${error.message}`, "error");
      }
    });
  }

  document.addEventListener("DOMContentLoaded", build);
})();

// Context view: the SessionStart block for a project, exactly as GET /api/context gives
// it (a <pre> filled with textContent), with the budget, the layers and what was left out.
"use strict";

(() => {
  const { api, el, projects } = memlite;
  let form, view;
  let latest = 0;

  function projectValue(item) {
    if (typeof item === "string") return item;
    return item && (item.project || item.path || item.name) || "";
  }

  function chosen() {
    return form.elements.path.value.trim() || form.elements.choice.value;
  }

  function show(project) {
    const select = form.elements.choice;
    if ([...select.options].some((o) => o.value === project)) {
      select.value = project;
      form.elements.path.value = "";
    } else {
      select.value = "";
      form.elements.path.value = project;
    }
  }

  function layersTable(layers) {
    return el("table", { "data-testid": "context-layers" },
      el("caption", { class: "label" }, "Layers"),
      el("thead", {}, el("tr", {},
        el("th", { scope: "col" }, "Layer"), el("th", { scope: "col" }, "Items"),
        el("th", { scope: "col" }, "Characters"), el("th", { scope: "col" }, "Tokens (approx.)"))),
      el("tbody", {}, layers.map((layer) => el("tr", { "data-layer": layer.name },
        el("th", { scope: "row" }, layer.name), el("td", {}, String(layer.items)),
        el("td", {}, String(layer.chars)), el("td", {}, String(layer.tokens))))));
  }

  function draw(block) {
    const layers = block.layers || [];
    const omitted = (block.omitted || []).filter((o) => o.count > 0);
    const used = block.budget ? Math.round((100 * block.chars) / block.budget) : 0;
    view.replaceChildren(...[
      el("p", { "data-testid": "context-project-resolved" }, "Project ",
         el("code", {}, block.project)),
      el("p", { "data-testid": "context-budget" },
         `${block.chars} of ${block.budget} characters used (${used} %)`),
      block.reason ? el("p", { class: "note", role: "note", "data-testid": "context-reason" },
                        `Empty: ${block.reason}`) : null,
      layers.length ? layersTable(layers) : null,
      omitted.length
        ? el("div", { "data-testid": "context-omitted" },
            el("h2", {}, "Left out (over the budget)"),
            el("ul", {}, omitted.map((o) => el("li", {}, `${o.layer}: ${o.count}`))))
        : el("p", { class: "note", "data-testid": "context-omitted-none" },
             "Nothing was left out."),
      el("h2", {}, "The block"),
      el("pre", { "data-testid": "context-block", tabindex: "0" }, block.context || "")].filter(Boolean));
  }

  async function run(project) {
    const ticket = ++latest;
    if (!project) {
      view.replaceChildren(el("p", { class: "empty", "data-testid": "context-hint" },
        "Choose a project, or type the path of a folder in one."));
      return;
    }
    view.replaceChildren(el("p", { class: "note" }, "Building…"));
    try {
      const block = await api(`/api/context?${new URLSearchParams({ project })}`);
      if (ticket === latest) draw(block);
    } catch (error) {
      if (ticket === latest) {
        view.replaceChildren(el("p", { class: "error", role: "alert",
                                       "data-testid": "context-error" },
                                `Could not build the context: ${error.message}`));
      }
    }
  }

  function fromUrl() {
    const project = new URLSearchParams(window.location.search).get("project") || "";
    show(project);
    return project;
  }

  document.addEventListener("DOMContentLoaded", async () => {
    form = document.getElementById("context-form");
    view = document.getElementById("view");
    form.elements.choice.addEventListener("change", () => {
      form.elements.path.value = "";
      form.requestSubmit();
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const project = chosen();
      const url = project ? `/context?${new URLSearchParams({ project })}` : "/context";
      if (url !== window.location.pathname + window.location.search) {
        history.pushState(null, "", url);
      }
      run(project);
    });
    window.addEventListener("popstate", () => run(fromUrl()));
    const select = form.elements.choice;
    for (const item of await projects()) {
      const value = projectValue(item);
      if (value && ![...select.options].some((o) => o.value === value)) {
        select.append(el("option", { value }, value));
      }
    }
    form.dataset.ready = "1";
    run(fromUrl());
  });
})();

// Settings view: every public setting (GET /api/settings) with an input fitting its type;
// Save sends only the changed keys (PUT /api/settings) and shows what the server said,
// its 400 message next to the field it names. Secrets never reach this page.
"use strict";

(() => {
  const { api, el, toast } = memlite;
  // The settings whose value is one of a few words (memlite/config.py). The API may also
  // send "choices" with a setting; that wins.
  const CHOICES = {
    OBSERVER: ["auto", "claude", "rules"],
    EMBEDDER: ["auto", "wordllama", "minilm", "ollama", "none"],
  };
  const SOURCES = { default: "default", file: "settings.json", env: "environment" };
  const MAX_SHOWN = 600;  // an echoed 100 kB value is cut in the middle, keeping the reason
  let form, view, result;
  let loaded = {};  // KEY -> the value as its input shows it, when last loaded or saved

  function shown(value) {
    if (Array.isArray(value)) return value.join(", ");
    return value === null || value === undefined ? "" : String(value);
  }

  function clip(message) {
    const text = String(message);
    if (text.length <= MAX_SHOWN) return text;
    const half = MAX_SHOWN / 2;
    return `${text.slice(0, half)} … (${text.length - MAX_SHOWN} characters left out) … ` +
           text.slice(-half);
  }

  function input(key, spec) {
    const id = `setting-${key}`;
    const common = { id, name: key, "data-testid": `input-${key}`,
                     "aria-describedby": `doc-${key} error-${key}` };
    const choices = spec.choices || CHOICES[key] ||
      (typeof spec.default === "boolean" ? ["true", "false"] : null);
    if (choices) {
      const value = shown(spec.value);
      const options = choices.includes(value) ? choices : [value, ...choices];
      const select = el("select", common, options.map((c) => el("option", { value: c }, c)));
      select.value = value;
      return select;
    }
    if (typeof spec.default === "number") {
      return el("input", { ...common, type: "number", step: "1", value: shown(spec.value) });
    }
    return el("input", { ...common, type: "text", value: shown(spec.value),
                         spellcheck: "false", autocomplete: "off" });
  }

  function row(key, spec) {
    const source = SOURCES[spec.source] || spec.source;
    return el("tr", { "data-key": key, "data-testid": `setting-${key}` },
      el("th", { scope: "row" }, el("label", { for: `setting-${key}` }, el("code", {}, key))),
      el("td", {}, input(key, spec),
        el("div", { class: "error", id: `error-${key}`, role: "alert",
                    "data-testid": `error-${key}` })),
      el("td", { "data-testid": `source-${key}`,
                 title: spec.source === "env" ? `MEMLITE_${key} is set; it wins over the file`
                                              : null }, source),
      el("td", { "data-testid": `default-${key}` }, el("code", {}, shown(spec.default))),
      el("td", { id: `doc-${key}`, class: "note" }, spec.doc));
  }

  function draw(settings) {
    loaded = {};
    const keys = Object.keys(settings).filter((key) => !settings[key].secret);
    for (const key of keys) loaded[key] = shown(settings[key].value);
    view.replaceChildren(el("table", { "data-testid": "settings-table" },
      el("thead", {}, el("tr", {},
        ["Setting", "Value", "Source", "Default", "Meaning"].map((h) =>
          el("th", { scope: "col" }, h)))),
      el("tbody", {}, keys.map((key) => row(key, settings[key])))));
  }

  function wire(raw, key) {
    // Whole numbers go as JSON numbers; anything else as typed, for the server to judge.
    const text = raw.trim();
    if (typeof loaded[key] === "string" && /^-?\d{1,15}$/.test(text) &&
        /^-?\d+$/.test(loaded[key])) {
      return Number(text);
    }
    return raw;
  }

  function edits() {
    const changed = {};
    for (const [key, before] of Object.entries(loaded)) {
      const field = form.elements[key];
      if (field && field.value !== before) changed[key] = wire(field.value, key);
    }
    return changed;
  }

  function clearErrors() {
    for (const box of view.querySelectorAll(".error")) box.textContent = "";
    for (const field of view.querySelectorAll("[aria-invalid]")) {
      field.removeAttribute("aria-invalid");
    }
  }

  function report(answer) {
    const line = (label, keys, testid) => el("p", { "data-testid": testid },
      `${label}: `, keys.length ? keys.join(", ") : "none");
    result.replaceChildren(
      line("Changed", answer.changed || [], "result-changed"),
      line("Takes effect after a worker restart", answer.restart_required || [],
           "result-restart"),
      line("Saved, but an environment variable overrides it", answer.overridden_by_env || [],
           "result-env"));
  }

  function refuse(message, sent) {
    const text = clip(message);
    const named = Object.keys(sent).filter((key) =>
      new RegExp(`\\b${key}\\b`).test(String(message).slice(0, 200)));
    const keys = named.length ? named : Object.keys(sent).slice(0, 1);
    for (const key of keys) {
      const box = document.getElementById(`error-${key}`);
      if (box) box.textContent = text;
      if (form.elements[key]) form.elements[key].setAttribute("aria-invalid", "true");
    }
    result.replaceChildren(el("p", { class: "error", role: "alert",
                                     "data-testid": "settings-error" },
                              `Nothing was saved: ${text}`));
  }

  async function save(event) {
    event.preventDefault();
    clearErrors();
    result.replaceChildren();
    const sent = edits();
    if (!Object.keys(sent).length) {
      result.replaceChildren(el("p", { class: "note", "data-testid": "result-nothing" },
                                "Nothing to save: no value was changed."));
      return;
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const answer = await api("/api/settings", { method: "PUT", body: sent });
      draw(answer.settings);
      report(answer);
      toast(`Saved ${(answer.changed || []).length} setting(s)`);
    } catch (error) {
      refuse(error.message, sent);
    } finally {
      button.disabled = false;
    }
  }

  async function load() {
    try {
      draw((await api("/api/settings")).settings || {});
    } catch (error) {
      view.replaceChildren(el("p", { class: "error", role: "alert" },
                              `Could not load the settings: ${error.message}`));
    }
  }

  document.addEventListener("DOMContentLoaded", async () => {
    form = document.getElementById("settings-form");
    view = document.getElementById("view");
    result = document.getElementById("settings-result");
    form.addEventListener("submit", save);
    document.getElementById("settings-reset").addEventListener("click", () => {
      clearErrors();
      result.replaceChildren();
      for (const [key, before] of Object.entries(loaded)) {
        if (form.elements[key]) form.elements[key].value = before;
      }
    });
    await load();
    form.dataset.ready = "1";
  });
})();

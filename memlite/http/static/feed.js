// Feed view: observations and summaries, newest first, from /api/feed.
//
// * Infinite scroll: an IntersectionObserver on a sentinel below the cards asks for the
//   next page by cursor (the API's "next"); a Set of "kind:id" keys makes sure a card is
//   never drawn twice, whatever the stream and the pages race to add.
// * Live: the worker's SSE stream names each stored observation or summary; the newest
//   page is fetched again and what is new is put on top, highlighted for a moment.
// * URL parameters: ?project=<path> (the filter, kept in the URL so it can be linked) and
//   ?page_size=<1..200> (cards per page, default 30; the browser tests use a small one).
// * The sentinel's data-state says "loading", "idle" (more pages, not yet wanted) or "end".
"use strict";

(() => {
  const { api, el, observationCard, summaryCard, projectFilter, stream } = memlite;
  const params = new URLSearchParams(window.location.search);
  const pageSize = Math.min(200, Math.max(1, parseInt(params.get("page_size"), 10) || 30));
  const seen = new Set();
  let project = params.get("project") || "";
  let next = null;
  let done = false;
  let loading = false;
  let generation = 0;  // a filter change starts a new generation; older answers are dropped
  let live = Promise.resolve();
  let cards, sentinel, empty, select;

  const key = (kind, id) => `${kind}:${id}`;

  function card(item) {
    const node = item.kind === "summary" ? summaryCard(item) : observationCard(item);
    node.setAttribute("data-session", item.session_id);
    node.setAttribute("data-key", key(item.kind, item.id));
    return node;
  }

  function query(extra) {
    const q = new URLSearchParams({ limit: String(pageSize), ...extra });
    if (project) q.set("project", project);
    return `/api/feed?${q}`;
  }

  function showEmpty() {
    const none = !cards.querySelector("article.card");
    empty.hidden = !(none && done);
    empty.textContent = project
      ? "Nothing recorded in this project yet."
      : "Nothing recorded yet. Observations appear here as Claude Code works.";
    sentinel.textContent = done ? (none ? "" : "End of the feed.") : "Loading…";
    sentinel.dataset.state = done ? "end" : (loading ? "loading" : "idle");
  }

  function nearSentinel() {
    const box = sentinel.getBoundingClientRect();
    return box.top < window.innerHeight + 100;
  }

  async function loadMore() {
    if (loading || done) return;
    loading = true;
    sentinel.dataset.state = "loading";
    const mine = generation;
    try {
      const body = await api(query(next ? { before: next } : {}));
      if (mine !== generation) return;
      for (const item of body.items) {
        const k = key(item.kind, item.id);
        if (seen.has(k)) continue;
        seen.add(k);
        cards.append(card(item));
      }
      next = body.next;
      done = !next;
    } catch (error) {
      if (mine !== generation) return;
      done = true;
      sentinel.textContent = "";
      sentinel.dataset.state = "end";
      memlite.toast(`Could not load the feed: ${error.message}`, "error");
      return;
    } finally {
      if (mine === generation) loading = false;
    }
    showEmpty();
    if (!done && nearSentinel()) loadMore();  // a short page leaves the sentinel in view
  }

  function restart() {
    generation += 1;
    seen.clear();
    cards.replaceChildren();
    next = null;
    done = false;
    loading = false;
    showEmpty();
    loadMore();
  }

  async function addNewest() {
    const mine = generation;
    const body = await api(query({}));
    if (mine !== generation) return;
    const fresh = body.items.filter((item) => !seen.has(key(item.kind, item.id)));
    for (const item of fresh.reverse()) {  // oldest of them first, so the newest ends on top
      seen.add(key(item.kind, item.id));
      const node = card(item);
      node.classList.add("fresh");
      cards.prepend(node);
      setTimeout(() => node.classList.remove("fresh"), 4000);
    }
    showEmpty();
  }

  function onStored(data) {
    if (project && data && data.project !== project) return;
    // one refresh at a time, in order: two events never race to add the same card
    live = live.then(addNewest).catch((error) => {
      memlite.toast(`Could not load a new item: ${error.message}`, "error");
    });
  }

  function onDeleted(event) {
    const { kind, id } = event.detail || {};
    const selector = kind === "session"
      ? `article.card[data-session="${CSS.escape(String(id))}"]`
      : `article.card[data-key="${CSS.escape(key(kind, id))}"]`;
    for (const node of cards.querySelectorAll(selector)) node.remove();
    showEmpty();
    if (!done && nearSentinel()) loadMore();
  }

  document.addEventListener("DOMContentLoaded", () => {
    const view = document.getElementById("view");
    select = projectFilter("feed-project", project, (chosen) => {
      project = chosen;
      restart();
    });
    cards = el("div", { class: "cards", "data-testid": "feed-cards", "aria-live": "polite" });
    empty = el("p", { class: "empty", "data-testid": "feed-empty", hidden: true });
    sentinel = el("p", { class: "note sentinel", "data-testid": "feed-sentinel" });
    view.replaceChildren(
      el("div", { class: "toolbar" }, el("label", { for: "feed-project" }, "Project", select)),
      empty, cards, sentinel);
    new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) loadMore();
    }, { rootMargin: "100px" }).observe(sentinel);
    document.addEventListener("memlite:deleted", onDeleted);
    stream({ observation: onStored, summary: onStored });
    restart();
  });
})();

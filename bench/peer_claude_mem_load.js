// Loads benchmark observations into a claude-mem database with claude-mem's OWN storage code.
//
// Run with Bun (claude-mem's runtime; its storage module needs bun:sqlite):
//   bun peer_claude_mem_load.js <claude-mem package dir> <output .db> <observations .jsonl>
// The package is the one published on the npm registry (`npm pack claude-mem@VERSION`,
// unpacked). Its plugin/sqlite/SessionStore.js creates the schema through all of its
// migrations; each session goes in through createSDKSession + updateMemorySessionId (what
// its worker calls when a session starts and its SDK agent gets an id) and each observation
// through storeObservation (what its worker calls for every observation its agent parses).
// Rows are grouped in transactions of 2,000 observations so that 100k rows load in
// seconds, not an fsync per row; the rows are the same either way.
//
// Each line of the .jsonl file is one observation, made by bench/peer_claude_mem.py:
//   {"session": "...", "project": "...", "at": <epoch ms>, "obs": {type, title, ...}}
// Lines of one session are consecutive. This file is memlite's own bench tooling; it calls
// claude-mem's code and copies none of it.
const path = require("path");
const fs = require("fs");
const [pkg, out, rowsFile] = process.argv.slice(2);
const { SessionStore } = require(path.join(pkg, "plugin", "sqlite", "SessionStore.js"));
if (fs.existsSync(out)) fs.unlinkSync(out);
const store = new SessionStore(out);
const lines = fs.readFileSync(rowsFile, "utf8").split("\n").filter((l) => l.length > 0);
const BATCH = 2000;
let current = null;
let stored = 0;
for (let start = 0; start < lines.length; start += BATCH) {
  store.db.transaction(() => {
    for (const line of lines.slice(start, start + BATCH)) {
      const row = JSON.parse(line);
      if (current !== row.session) {
        current = row.session;
        const id = store.createSDKSession(row.session, row.project, "");
        store.updateMemorySessionId(id, "mem-" + row.session);
      }
      store.storeObservation("mem-" + row.session, row.project, row.obs, 1, 0, row.at);
      stored += 1;
    }
  })();
}
const count = store.db.prepare("SELECT COUNT(*) AS n FROM observations").get().n;
store.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
store.close();
if (count !== stored) {
  console.error(`stored ${stored} observations but the database holds ${count}`);
  process.exit(1);
}
console.log(JSON.stringify({ observations: count, version:
  require(path.join(pkg, "package.json")).version }));

"""The own eval's hand-written corpus, the queries added for issue 14 (both halves, then the
dev half only). ``write_dataset`` calls ``add`` in the corpus's order; the records are as
they were written, one per line."""

from bench.eval.dataset_spec import QD, QX


def add():
    # ---------------------------------------------------------------------------
    # Added for issue 14 (2026-12-01): the original dev half was saturated (recall@5 0.975),
    # so 24 queries in the two weakest categories were added, 2 paraphrase + 2 temporal per
    # project. Written before any test figure of this round was looked at; ids q108-q131,
    # and the parity split puts one of each pair in the dev half and one in the test half.
    # ---------------------------------------------------------------------------
    QX("billing", "paraphrase", "totals on the web app showed as not-a-number after we changed how money is kept", [31])
    QX("billing", "paraphrase", "the same bill number was handed out twice when two invoices were closed at once", [17, 18])
    QX("billing", "temporal", "what timeout does the Stripe client use now", [48])
    QX("billing", "temporal", "which lock keeps billing cycles from overlapping these days", [38, 39])
    QX("dash", "paraphrase", "thousands and decimal marks looked American for users who picked German", [50])
    QX("dash", "paraphrase", "signed-out users still got chart updates pushed to them", [42])
    QX("dash", "temporal", "which charting library do we use now", [18, 45])
    QX("dash", "temporal", "which Node version do we develop on now", [31])
    QX("stash", "paraphrase", "files named with diacritics looked modified on every run from the Apple laptop", [51])
    QX("stash", "paraphrase", "updating the chunk catalog went from nine seconds to about one", [54])
    QX("stash", "temporal", "what hash function are chunk ids computed with now", [17, 18])
    QX("stash", "temporal", "how big is the release binary now", [47, 44])
    QX("router", "paraphrase", "the whole price lookup failed when just one shipping company was down", [49, 50])
    QX("router", "paraphrase", "monitoring server ran out of memory because we labelled metrics with per-parcel ids", [44])
    QX("router", "temporal", "what is the minimum replica count for the router now", [53])
    QX("router", "temporal", "which Go version are we on now", [45])
    QX("etl", "paraphrase", "the customer history table made a fresh row for everyone on every run", [38, 39])
    QX("etl", "paraphrase", "loads from the partner choked on line breaks inside fields", [51])
    QX("etl", "temporal", "what time does the daily dbt run start now", [45, 29])
    QX("etl", "temporal", "which Airflow version are we running at the moment", [33])
    QX("android", "paraphrase", "the app froze at launch while saving settings to disk", [21, 22])
    QX("android", "paraphrase", "pictures taken in portrait mode appear rotated in the previews", [54])
    QX("android", "temporal", "which JSON library does the app use now", [52, 51])
    QX("android", "temporal", "which annotation processor do Room and Hilt use now", [31])

    # ---------------------------------------------------------------------------
    # Added for issue 14, round 5 (2026-12-01): DEV HALF ONLY. The dev half (66 queries) was
    # saturated (hybrid recall@5 0.992) and a dev-chosen change lowered the test half, so it
    # could not guide tuning. These queries were written against the corpus above by someone
    # who never opened the test queries (only the odd-numbered rows were read), covering what
    # users ask: paraphrases sharing no words, "current / now" where a decision changed, file
    # questions that name the role (read vs changed), "why did we ...", questions naming a
    # date, and framing words ("how do we handle ...", "what's the deal with ..."). Numbered
    # with odd ids after q131, so they are all dev and the test half is unchanged.
    # ---------------------------------------------------------------------------
    # acme-billing
    QD("billing", "temporal", "how do we stop two billing runs overlapping right now", [38])
    QD("billing", "temporal", "what did we decide about the billing cycle lock", [38])
    QD("billing", "temporal", "which Django version are we on", [29])
    QD("billing", "paraphrase", "reminder mails kept going to people who had already quit", [36])
    QD("billing", "paraphrase", "test runs were slow because the database got rebuilt every time", [32])
    QD("billing", "file", "what did we change in billing/locks.py", [13, 26, 38])
    QD("billing", "file", "who read deploy/pgbouncer.ini", [37])
    QD("billing", "decision", "why do we keep amounts as whole numbers", [23])
    QD("billing", "decision", "how do we handle sales tax", [41, 42, 43, 44])
    QD("billing", "paraphrase", "what's the deal with refunds", [52, 53])
    QD("billing", "dated", "what did we do on 19 July 2026", [29, 30, 31, 32])
    # pulse-dashboard
    QD("dash", "temporal", "how does the UI keep its state nowadays", [9, 10, 12])
    QD("dash", "temporal", "what is the live metrics transport these days", [46, 47])
    QD("dash", "paraphrase", "the site looked white for a split second before turning dark", [39])
    QD("dash", "paraphrase", "spreadsheet export mangled German characters", [34])
    QD("dash", "file", "which changes touched src/api/queryClient.ts", [27, 56])
    QD("dash", "decision", "why did we move off websockets", [46])
    QD("dash", "paraphrase", "how do we handle expired login tokens", [28, 27, 2])
    QD("dash", "dated", "what happened in the dashboard on 2 August 2026", [33, 34, 35, 36])
    # stash-cli
    QD("stash", "temporal", "which config file formats are supported now", [45, 46])
    QD("stash", "temporal", "what hash function do chunk ids use now", [17])
    QD("stash", "paraphrase", "the executable we ship got much smaller", [47])
    QD("stash", "paraphrase", "names with diacritics looked modified on every run from a Mac", [51])
    QD("stash", "file", "what did we change in src/backend/s3.rs", [25, 26, 27, 53, 55])
    QD("stash", "decision", "why did we pick an embedded database for chunk bookkeeping", [12])
    QD("stash", "decision", "how do we handle encryption keys", [37, 38])
    QD("stash", "error", "database is locked", [15])
    QD("stash", "dated", "what did we do on 27 July 2026", [25, 26, 27, 28])
    # courier-router
    QD("router", "temporal", "how does the router autoscale now", [53, 37, 38, 39])
    QD("router", "temporal", "what's the database connection limit per pod currently", [40])
    QD("router", "paraphrase", "one bad shipping company made every price request fail", [49])
    QD("router", "paraphrase", "pods kept restarting whenever postgres was sluggish", [5])
    QD("router", "file", "what did we read in hpa.yaml", [30, 37])
    QD("router", "file", "what changed in internal/telemetry/metrics.go", [43, 44])
    QD("router", "decision", "why didn't we add pgbouncer", [15])
    QD("router", "paraphrase", "what's the deal with distroless", [54])
    QD("router", "dated", "what did we do on 9 August 2026", [29, 30, 31, 32])
    # lakehouse-etl
    QD("etl", "temporal", "when does dbt_daily run now", [45])
    QD("etl", "temporal", "which python version do the workers run these days", [35])
    QD("etl", "paraphrase", "the customer history table made a new row for everyone every night", [38])
    QD("etl", "paraphrase", "records that showed up several days late just vanished", [27])
    QD("etl", "file", "what changed in dbt/macros/partitions.sql", [26, 27])
    QD("etl", "decision", "why did we stop merging into fct_events", [25, 10])
    QD("etl", "decision", "how do we handle failure notifications", [31, 32])
    QD("etl", "error", "No module named 'include'", [3])
    QD("etl", "dated", "what happened on 16 August 2026", [29, 30, 31, 32])
    # fieldnotes-android
    QD("android", "temporal", "how often does background sync run now", [45])
    QD("android", "temporal", "what do we use for JSON parsing these days", [52])
    QD("android", "paraphrase", "app froze on first launch while saving preferences", [21, 22])
    QD("android", "paraphrase", "notes with big drawings crashed on open", [41])
    QD("android", "file", "what did we change in SyncWorker.kt", [9, 10, 11, 28])
    QD("android", "decision", "why no CRDTs", [34])
    QD("android", "decision", "how do we handle conflicting edits from two devices", [33, 34, 35])
    QD("android", "error", "FileUriExposedException", [8])
    QD("android", "dated", "what did we do on 10 August 2026", [21, 22, 23, 24])

    # Current-state questions without a time cue word ("which ... do we use", "where did we
    # land on ..."): present tense asks for the state now as much as "now" does.
    QD("billing", "temporal", "which lock do we use for the billing cycle", [38])
    QD("billing", "temporal", "where did we land on the billing cycle lock", [38])
    QD("dash", "temporal", "what do we use to stream live metrics to the browser", [46, 47])
    QD("dash", "temporal", "which charting library are we using", [18])
    QD("stash", "temporal", "what's our minimum supported Rust version", [48])
    QD("stash", "temporal", "which config formats do we accept in the end", [45])
    QD("router", "temporal", "what do we autoscale the router on", [37, 38, 53])
    QD("router", "temporal", "how many database connections does each pod get", [40])
    QD("etl", "temporal", "what triggers the dbt_daily DAG", [45])
    QD("etl", "temporal", "which incremental strategy is fct_events on", [25, 26])
    QD("android", "temporal", "what's the minSdk", [47])
    QD("android", "temporal", "where did we land on the background sync interval", [45])

    # Harder ones: paraphrases that share (almost) no word with their answer, often a problem
    # and the fix written down minutes later, and "still ...?" questions whose answer is the
    # newest state and the one it replaced.
    QD("billing", "paraphrase", "customers got hit twice for one purchase when the card processor re-sent its notification", [5, 6])
    QD("billing", "paraphrase", "month-end document jobs blew past the memory limit", [45, 46])
    QD("billing", "paraphrase", "the tax advisor wanted rounding done once per bill rather than per row", [42])
    QD("billing", "paraphrase", "the API started returning text for prices after we changed how money is stored", [31])
    QD("dash", "paraphrase", "the big overview screen was sluggish until we swapped the plotting library", [17, 18, 20])
    QD("dash", "paraphrase", "people with an old tab open got blank pages when navigating after we shipped a new build", [55])
    QD("dash", "paraphrase", "logging out didn't stop the live feed", [42])
    QD("dash", "paraphrase", "the identity server refused several simultaneous renewals of the access credential", [28])
    QD("stash", "paraphrase", "hashing went multi-threaded and a 40 gigabyte run got much quicker", [10])
    QD("stash", "paraphrase", "retrying a failed upload to object storage broke because the payload stream was already read", [53])
    QD("stash", "paraphrase", "users on tiny servers complained about how big the download was", [44, 47])
    QD("router", "paraphrase", "spans were disconnected once messages went through the queue", [42])
    QD("router", "paraphrase", "the autoscaler never added pods because they declared no processor reservation", [30])
    QD("router", "paraphrase", "the first deliveries each morning waited a minute and a half", [53])
    QD("etl", "paraphrase", "the nightly model build got killed for running too long", [15, 16])
    QD("etl", "paraphrase", "a handful of models made up most of the warehouse bill", [44])
    QD("etl", "paraphrase", "moving the clocks in spring shifted our schedules", [30])
    QD("etl", "paraphrase", "the CRM pull ran out of API calls for the day", [8])
    QD("android", "paraphrase", "the app hung at startup because of a blocking write on the main thread", [21, 22])
    QD("android", "paraphrase", "some Chinese phone brands never ran the periodic job", [26])
    QD("android", "paraphrase", "scrolling the note list stuttered", [53, 6])
    QD("android", "paraphrase", "the server refused big image uploads for their size", [37])
    QD("billing", "temporal", "what did we end up with for the billing lock after the PgBouncer problem", [38, 37])
    QD("etl", "temporal", "is the dbt_daily schedule still 04:00", [45, 29])
    QD("android", "temporal", "is minSdk still 24", [47, 24])
    QD("router", "temporal", "is the pgx pool still capped at 10", [40, 15])
    QD("stash", "temporal", "do we still support YAML configs", [45, 46])
    QD("stash", "temporal", "is the MSRV still 1.74", [48, 24])

    # Round 6 (2026-12-02): harder dev-only queries. The dev half had saturated again (hybrid
    # recall@5 0.988 on 161 queries) while the test half stood at 0.910, so it could not tell
    # a good ranking change from a bad one. 93 candidates were written against the observations
    # above (only observations and odd-numbered rows were read; no test query, result or
    # failure was looked at): a user's vague wording for the observer's technical title,
    # heavy framing ("can you remind me what the story was with ..."), and current-state
    # questions whose newest decision shares no word with them. Each was run through MiniLM
    # alone, hybrid and the stdlib BM25 before keeping it; only the 34 that MiniLM alone or
    # hybrid missed (recall@5 < 1) were kept. Relevance is graded as for any other query:
    # every observation that answers it, not whatever the ranking found.
    QD("billing", "paraphrase", "can you remind me what the story was with people getting charged twice", [5, 6])
    QD("billing", "paraphrase", "remind me why the monthly invoices came out a day early", [15, 16])
    QD("billing", "temporal", "what are we using today to make sure the monthly job can't run twice at the same time", [38])
    QD("billing", "paraphrase", "a change in how requests were logged broke checking that events really came from the payment company", [50])
    QD("billing", "temporal", "do we still make the invoice documents when the invoice is finalized", [55])
    QD("billing", "paraphrase", "any idea what we did about folks who got some of their money back", [52, 53])
    QD("billing", "paraphrase", "what went wrong with the yearly counter on bills when two people closed them together", [17, 18])
    QD("billing", "temporal", "what's our current approach for keeping the nightly billing from double-running", [38, 39])
    QD("dash", "paraphrase", "can you remind me what the story was with the realtime numbers and office firewalls", [46, 47])
    QD("dash", "temporal", "what do we do these days so that the graphs update by themselves", [46, 47])
    QD("dash", "paraphrase", "users saw a never-ending loading wheel when the backend hung", [7, 8])
    QD("dash", "paraphrase", "what was going on with everyone's browser hammering the server right after we shipped the backend", [23])
    QD("dash", "temporal", "how is the newest live data pushed to the page at the moment", [46, 47])
    QD("dash", "paraphrase", "can you remind me what the story was with expired logins being slow to bounce people out", [27, 28])
    QD("dash", "paraphrase", "the page took ages to become usable on a slow phone connection", [53, 54])
    QD("dash", "paraphrase", "error reports pointed at minified gibberish", [43])
    QD("stash", "temporal", "what do we fingerprint data blocks with today", [17])
    QD("stash", "temporal", "what's the oldest compiler we support at the moment", [48])
    QD("stash", "temporal", "which formats can people write their settings in at this point", [45, 46])
    QD("stash", "paraphrase", "what was the problem with two copies of the tool running at once", [15, 16])
    QD("stash", "temporal", "how do we keep backed-up data secret nowadays", [37, 38])
    QD("stash", "paraphrase", "can you remind me what the story was with an upgrade of the storage layout leaving things broken", [19])
    QD("router", "paraphrase", "deploys dropped requests that were in the middle of being handled", [7, 8])
    QD("router", "temporal", "how many copies of the service do we keep running when it's quiet now", [53])
    QD("router", "temporal", "how do we stop a flaky partner from taking everything down these days", [50, 49])
    QD("router", "temporal", "what's the current setup for adding more pods when work piles up", [37, 38, 53])
    QD("router", "paraphrase", "every copy of the service grabbed too many database sessions", [13, 14])
    QD("router", "paraphrase", "can you remind me what the story was with schema changes getting stuck halfway", [34, 35])
    QD("etl", "temporal", "what decides when the warehouse models get rebuilt these days", [45])
    QD("etl", "paraphrase", "the scheduler choked while loading the pipeline definitions", [18, 20])
    QD("etl", "temporal", "which version of the orchestrator are we on at the moment", [33])
    QD("android", "temporal", "when does the app sync with the server these days", [45, 46])
    QD("android", "paraphrase", "the release version couldn't read what the server sent back", [51, 52])
    QD("android", "paraphrase", "the build broke after moving to the new language version", [30, 32])


    # Dev-only temporal queries of issue 14, round 7: "latest / current / now" questions over the
    # corpus' changes of mind, naming their topic, written to cover the kind (kept whether or
    # not memlite finds them; see the README's "Temporal dev-only queries").
    QD("billing", "temporal", "latest decision about the billing cycle lock", [38])
    QD("dash", "temporal", "what is the current approach for live metrics", [46, 47])
    QD("dash", "temporal", "which charting library is current", [18])
    QD("stash", "temporal", "what is the latest MSRV", [48])
    QD("stash", "temporal", "is YAML config still supported in the latest version", [45, 46])
    QD("router", "temporal", "what is MaxConns set to now", [40])
    QD("router", "temporal", "current autoscaling setup for the router", [37, 38, 53])
    QD("router", "temporal", "what is the minimum replica count today", [53])
    QD("router", "temporal", "which HTTP router do the admin routes use now", [47])
    QD("etl", "temporal", "latest schedule of the dbt_daily DAG", [45])
    QD("etl", "temporal", "most recent change to when dbt_daily runs", [45])
    QD("etl", "temporal", "how is fct_events built incrementally now", [25, 26])
    QD("android", "temporal", "what minSdk do we target now", [47])
    QD("android", "temporal", "most recent change to background sync", [45, 46])
    QD("android", "temporal", "what JSON library does Retrofit use currently", [52])
    QD("android", "temporal", "latest sync interval for the WorkManager job", [45])

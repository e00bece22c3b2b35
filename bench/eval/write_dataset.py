"""Writes bench/eval/dataset.json from hand-written records below.

The observation and query texts are written by hand; only keys, session ids and
timestamps are derived mechanically (sessions are spread over ~3 months, the
observations of one session a few minutes apart, in the order written).

Run:  .venv/bin/python -m bench.eval.write_dataset
"""
import datetime as _dt
import json
import os

PROJECTS = {}   # prefix -> dict(path, start, sessions, obs, queries)
_CUR = None


def project(prefix, path, start, n_sessions):
    global _CUR
    _CUR = PROJECTS[prefix] = {"path": path, "start": start, "n_sessions": n_sessions,
                               "obs": [], "queries": []}


def O(n, s, type_, title, subtitle, narrative, facts, concepts, files_read=(), files_modified=()):
    _CUR["obs"].append(dict(n=n, s=s, type=type_, title=title, subtitle=subtitle,
                            narrative=narrative, facts=list(facts), concepts=list(concepts),
                            files_read=list(files_read), files_modified=list(files_modified)))


def Q(category, query, relevant):
    _CUR["queries"].append(dict(category=category, query=query, relevant=list(relevant)))


EXTRA = []  # (prefix, query dict): queries added after the first 107, numbered after them


def QX(prefix, category, query, relevant):
    """A query added later (issue 14): numbered after every original query, so the
    dev/test split of the originals (by id parity) stays as it was."""
    EXTRA.append((prefix, dict(category=category, query=query, relevant=list(relevant))))


DEV_EXTRA = []  # (prefix, query dict): dev-only queries of issue 14's fifth round


def QD(prefix, category, query, relevant):
    """A query added to the DEV half only (issue 14, round 5): numbered after every other
    query with odd numbers only (q133, q135, ...), so it lands in the dev half and the test
    half stays exactly as it was."""
    DEV_EXTRA.append((prefix, dict(category=category, query=query, relevant=list(relevant))))


def _build():
    projects, observations, queries = [], [], []
    qn = 0
    for prefix, p in PROJECTS.items():
        projects.append(p["path"])
        start = _dt.datetime.fromisoformat(p["start"])
        span = 88
        per_session = {}
        _offsets = {}
        for o in p["obs"]:
            s = o["s"]
            per_session[s] = per_session.get(s, 0) + 1
            idx = per_session[s] - 1
            day = round((s - 1) * span / max(1, p["n_sessions"] - 1))
            hour = 9 + (s * 5 + len(prefix)) % 8
            minute = (s * 13) % 40
            offset = _offsets.get(s, 0) + (0 if idx == 0 else 6 + (o["n"] * 7) % 13)
            _offsets[s] = offset
            t = start + _dt.timedelta(days=day, hours=hour, minutes=minute + offset,
                                      seconds=(o["n"] * 17) % 60)
            observations.append({
                "key": f"{prefix}-{o['n']:03d}", "project": p["path"],
                "session": f"{prefix}-s{s:02d}",
                "created_at": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "type": o["type"], "title": o["title"], "subtitle": o["subtitle"],
                "narrative": o["narrative"], "facts": o["facts"], "concepts": o["concepts"],
                "files_read": o["files_read"], "files_modified": o["files_modified"],
            })
        for q in p["queries"]:
            qn += 1
            queries.append({"id": f"q{qn:03d}", "project": p["path"], "category": q["category"],
                            "query": q["query"],
                            "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    for prefix, q in EXTRA:
        qn += 1
        queries.append({"id": f"q{qn:03d}", "project": PROJECTS[prefix]["path"],
                        "category": q["category"], "query": q["query"],
                        "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    for prefix, q in DEV_EXTRA:
        qn += 1 if qn % 2 == 0 else 2  # the next odd number: the dev half
        queries.append({"id": f"q{qn:03d}", "project": PROJECTS[prefix]["path"],
                        "category": q["category"], "query": q["query"],
                        "relevant": [f"{prefix}-{r:03d}" for r in q["relevant"]]})
    return {"version": 1, "projects": projects, "observations": observations, "queries": queries}



# ---------------------------------------------------------------------------
# 1. acme-billing: Python 3.11 / Django / Celery / Stripe / Postgres
# ---------------------------------------------------------------------------
project("billing", "/home/dev/acme-billing", "2026-06-02", 14)

O(1, 1, "discovery", "Mapped the billing service layout", "Django project with billing, invoices, payments and customers apps",
  "Claude explored the repository before touching anything. The service is a Django 4.2 monolith; Stripe integration lives in the payments app and invoice generation in the invoices app, with Celery doing all scheduled work.",
  ["config/settings/base.py holds shared settings, config/settings/prod.py overrides", "payments/webhooks.py has a single 600-line stripe_webhook view",
   "invoices/models.py defines Invoice, InvoiceLine, InvoiceNumberSequence"],
  ["project structure", "django apps"], ["config/settings/base.py", "payments/webhooks.py", "invoices/models.py"], [])
O(2, 1, "discovery", "Celery beat schedule drives the monthly billing cycle", "run_billing_cycle task scheduled via CELERY_BEAT_SCHEDULE",
  "The monthly billing cycle is not a cron job but a Celery beat entry in config/celery.py. It fires billing.tasks.run_billing_cycle on the 1st of each month at 00:05.",
  ["config/celery.py: crontab(minute=5, hour=0, day_of_month=1)", "beat uses django-celery-beat DatabaseScheduler in prod", "Broker is Redis 7 at REDIS_URL"],
  ["celery beat", "scheduling"], ["config/celery.py", "billing/tasks.py"], [])
O(3, 1, "change", "Bumped local docker-compose Postgres to 15", "Matches the RDS version used in production",
  "Local development used postgres:12 while production runs RDS Postgres 15, which hid a difference in how MERGE and generated columns behave. The compose file now pins postgres:15.6-alpine.",
  ["docker-compose.yml: image postgres:15.6-alpine", "Developers must run `docker compose down -v` once to drop the old data volume"],
  ["local development", "postgres version"], ["docker-compose.yml"], ["docker-compose.yml"])
O(4, 1, "bugfix", "Fixed test fixture that created invoices in the local timezone", "make_invoice factory used naive datetimes",
  "tests/factories.py built issued_at with datetime.now(), producing RuntimeWarning: DateTimeField Invoice.issued_at received a naive datetime while time zone support is active. Switched the factory to django.utils.timezone.now so tests behave the same on CI and laptops.",
  ["tests/factories.py InvoiceFactory.issued_at now uses timezone.now", "Warning was escalated to error by filterwarnings=error in pytest.ini"],
  ["tests", "timezone", "factories"], ["tests/factories.py", "pytest.ini"], ["tests/factories.py"])

O(5, 2, "bugfix", "Fixed double charge when Stripe webhook retried", "invoice.payment_succeeded handler was not idempotent",
  "Two customers were charged twice because Stripe re-delivered invoice.payment_succeeded after our endpoint took longer than 10s to answer, and each delivery created a new Payment and triggered a follow-up charge. The handler now records the Stripe event id first and skips events it has already processed.",
  ["payments/webhooks.py handle_payment_succeeded checks ProcessedWebhookEvent before acting", "Stripe event id evt_* stored with unique constraint",
   "Incident affected customers cus_Q2x... and cus_Q9a..., refunded manually"],
  ["idempotency", "webhooks", "stripe"], ["payments/webhooks.py", "payments/models.py"], ["payments/webhooks.py"])
O(6, 2, "feature", "Added ProcessedWebhookEvent model for webhook idempotency", "Migration payments/0042_processedwebhookevent",
  "A small table keyed on the Stripe event id backs the idempotency check. Insertion happens inside the same transaction as the side effects so a crash mid-handler lets the retry run again.",
  ["payments/models.py: ProcessedWebhookEvent(event_id unique, type, received_at)", "Migration 0042 adds the table", "get_or_create inside transaction.atomic()"],
  ["idempotency", "django migration", "webhooks"], ["payments/models.py"], ["payments/models.py", "payments/migrations/0042_processedwebhookevent.py"])
O(7, 2, "change", "Added regression test replaying the same webhook twice", "test_duplicate_event_is_ignored",
  "The new test posts an identical signed payload twice and asserts only one Payment row exists. It uses stripe.Webhook.generate_test_header-style signing helper written in tests/stripe_helpers.py.",
  ["tests/payments/test_webhooks.py::test_duplicate_event_is_ignored", "tests/stripe_helpers.py sign_payload(secret, body)"],
  ["tests", "webhooks"], [], ["tests/payments/test_webhooks.py", "tests/stripe_helpers.py"])
O(8, 2, "discovery", "Stripe retries failed webhook deliveries for up to three days", "Exponential backoff on non-2xx or slow responses",
  "Reading Stripe's docs during the incident: any non-2xx response or a response slower than the timeout is retried with exponential backoff for up to 3 days in live mode. That means every handler must tolerate duplicates and out-of-order delivery.",
  ["Live mode: retries up to 3 days", "Test mode: retries 3 times over a few hours", "Ordering of events is not guaranteed"],
  ["webhooks", "stripe", "retry"], ["payments/webhooks.py"], [])

O(9, 3, "bugfix", "Invoice PDF rendering failed on the slim Docker image", "WeasyPrint could not find Pango",
  "After moving the base image to python:3.11-slim, every PDF job crashed with OSError: cannot load library 'libpango-1.0-0': libpango-1.0-0: cannot open shared object file. The Dockerfile now apt-installs libpango-1.0-0 and libpangoft2-1.0-0.",
  ["OSError: cannot load library 'libpango-1.0-0'", "Dockerfile: apt-get install -y libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core",
   "Image size grew 38 MB"],
  ["docker", "pdf generation", "weasyprint"], ["Dockerfile", "invoices/pdf.py"], ["Dockerfile"])
O(10, 3, "decision", "Kept WeasyPrint instead of switching to ReportLab", "HTML templates outweigh the system dependency pain",
  "Claude weighed replacing WeasyPrint with ReportLab to drop the Pango dependency. The team chose to keep WeasyPrint because invoices are Django HTML templates that designers edit, and porting them to ReportLab's canvas API would freeze the layout in Python code.",
  ["ReportLab would remove native deps but needs layouts in code", "invoices/templates/invoices/invoice.html is edited by design team", "Decision: keep WeasyPrint 61.x"],
  ["pdf generation", "library choice", "weasyprint"], ["invoices/pdf.py", "invoices/templates/invoices/invoice.html"], [])
O(11, 3, "change", "Invoice PDF generation sped up from 4.2s to 1.1s", "Reused FontConfiguration and stopped fetching CSS over HTTP",
  "Profiling showed most of the time in font discovery and in fetching the stylesheet via the public URL. Rendering now shares one FontConfiguration per worker and passes base_url pointing to the local static directory.",
  ["Median render 4.2s -> 1.1s over 200 invoices", "FontConfiguration cached at module level", "base_url=settings.STATIC_ROOT instead of https://billing.acme.io/static/"],
  ["performance", "pdf generation"], ["invoices/pdf.py"], ["invoices/pdf.py"])
O(12, 3, "refactor", "Moved PDF code into invoices/pdf/render.py", "Split rendering from storage upload",
  "invoices/pdf.py mixed rendering, S3 upload and email attachment. It is now a package: render.py returns bytes, storage.py uploads to S3, and the Celery task composes them.",
  ["invoices/pdf/render.py render_invoice_pdf(invoice) -> bytes", "invoices/pdf/storage.py upload_pdf(invoice, data)", "Old import path kept as shim for one release"],
  ["refactor", "pdf generation"], ["invoices/pdf.py"], ["invoices/pdf/render.py", "invoices/pdf/storage.py", "invoices/pdf/__init__.py"])

O(13, 4, "decision", "Use a Redis lock to prevent overlapping billing cycle runs", "redis-py Lock with 600s timeout",
  "Ops once triggered run_billing_cycle manually while beat also fired it, generating duplicate invoices. Claude added a Redis lock around the whole run since Redis is already the Celery broker; a Postgres lock was considered but deemed unnecessary at the time.",
  ["billing/locks.py billing_cycle_lock() wraps redis.lock('billing-cycle', timeout=600, blocking_timeout=5)", "Second runner logs 'billing cycle already running' and exits"],
  ["locking", "redis", "concurrency"], ["billing/tasks.py"], ["billing/locks.py", "billing/tasks.py"])
O(14, 4, "feature", "Added run_billing_cycle management command with --dry-run", "Prints invoices that would be generated",
  "Finance wanted to preview the cycle before month end. The command reuses the Celery task body but wraps it in a transaction that is rolled back when --dry-run is passed.",
  ["billing/management/commands/run_billing_cycle.py", "--dry-run uses transaction.set_rollback(True)", "--customer limits to one customer id"],
  ["management command", "billing cycle"], ["billing/tasks.py"], ["billing/management/commands/run_billing_cycle.py"])
O(15, 4, "bugfix", "Billing cycle fired the evening before the 1st", "Celery beat evaluated crontab in America/New_York",
  "Invoices dated the 1st were generated at 19:05 on the last day of the previous month. Django TIME_ZONE was America/New_York and Celery inherited it, while the crontab was written assuming UTC; setting CELERY_TIMEZONE='UTC' fixed the schedule.",
  ["config/settings/base.py: CELERY_TIMEZONE = 'UTC'", "TIME_ZONE stays America/New_York for admin display", "django_celery_beat crontab rows needed timezone updated via data migration"],
  ["celery beat", "timezone", "scheduling"], ["config/celery.py", "config/settings/base.py"], ["config/settings/base.py"])
O(16, 4, "change", "Data migration to set crontab timezone to UTC", "django_celery_beat CrontabSchedule rows",
  "DatabaseScheduler stores a timezone per CrontabSchedule, so changing the setting alone did not move existing schedules. A data migration updates all rows to UTC.",
  ["billing/migrations/0031_crontab_utc.py updates CrontabSchedule.timezone", "Verified with `celery -A config inspect scheduled`"],
  ["celery beat", "timezone", "django migration"], [], ["billing/migrations/0031_crontab_utc.py"])

O(17, 5, "bugfix", "Fixed duplicate invoice numbers under concurrent finalization", "IntegrityError on invoices_invoice_number_key",
  "Two Celery workers finalizing invoices at the same moment read the same last number and both wrote it: django.db.utils.IntegrityError: duplicate key value violates unique constraint \"invoices_invoice_number_key\". The next number is now allocated by locking the sequence row with select_for_update.",
  ["invoices/numbering.py next_invoice_number() uses InvoiceNumberSequence.objects.select_for_update()", "Format INV-2026-000123 kept", "Error seen 14 times in Sentry during the July cycle"],
  ["concurrency", "invoice numbering", "postgres"], ["invoices/models.py", "invoices/services.py"], ["invoices/numbering.py", "invoices/services.py"])
O(18, 5, "refactor", "Extracted InvoiceNumberAllocator class", "Per-year sequences with gap-free numbering",
  "Numbering logic had been inlined in three places. InvoiceNumberAllocator centralises it and resets the counter each calendar year as required by the accountants.",
  ["invoices/numbering.py InvoiceNumberAllocator.allocate(year)", "One InvoiceNumberSequence row per year", "credit notes use prefix CN- with their own sequence"],
  ["refactor", "invoice numbering"], ["invoices/numbering.py"], ["invoices/numbering.py", "invoices/models.py"])
O(19, 5, "bugfix", "Stabilised flaky numbering test", "Needed transaction=True for select_for_update across threads",
  "test_concurrent_allocation failed about 1 in 5 runs because the default django_db fixture wraps the test in a transaction that worker threads cannot see. Marked it django_db(transaction=True) and joined threads with a timeout.",
  ["tests/invoices/test_numbering.py::test_concurrent_allocation", "@pytest.mark.django_db(transaction=True)"],
  ["tests", "flaky test"], ["tests/invoices/test_numbering.py"], ["tests/invoices/test_numbering.py"])
O(20, 5, "discovery", "Proration divides by a fixed 30-day month", "billing/proration.py uses DAYS_IN_PERIOD = 30",
  "While reading the upgrade flow Claude noticed proration always uses 30 days, so mid-month plan changes in February and 31-day months are slightly off. Logged for follow-up rather than changed immediately.",
  ["billing/proration.py prorate(amount, start, end) uses DAYS_IN_PERIOD = 30", "Used by plan upgrades and seat changes"],
  ["proration", "billing"], ["billing/proration.py"], [])

O(21, 6, "bugfix", "Proration now uses actual days in the billing period", "February and leap-year upgrades were overcharged",
  "A customer upgrading on 2028-02-15 would be charged for 15/30 of a month instead of 15/29. prorate() now computes the real period length with calendar.monthrange, and tests cover February 2028.",
  ["billing/proration.py uses calendar.monthrange(year, month)[1]", "tests/billing/test_proration.py adds leap-year and 31-day cases", "Rounding stays at the line level"],
  ["proration", "leap year", "billing"], ["billing/proration.py"], ["billing/proration.py", "tests/billing/test_proration.py"])
O(22, 6, "feature", "Coupon support with percent_off and amount_off", "Applied before tax at invoice finalization",
  "Added a Coupon model mirroring Stripe's coupon fields, applied to subscription lines at finalization. Only one coupon per invoice for now.",
  ["billing/models.py Coupon(code, percent_off, amount_off, duration, max_redemptions)", "invoices/services.py apply_discounts()"],
  ["coupons", "discounts"], ["invoices/services.py"], ["billing/models.py", "invoices/services.py", "billing/migrations/0035_coupon.py"])
O(23, 6, "decision", "Store money as integer cents, not DecimalField", "BigIntegerField amount_cents plus currency",
  "Mixed Decimal and float arithmetic had produced 0.01 discrepancies against Stripe. The team chose integer minor units everywhere because Stripe's API already uses them and integer math avoids quantize calls scattered across the code.",
  ["All money fields become *_cents BigIntegerField", "Currency stored as 3-letter ISO code", "Display formatting only in serializers/templates"],
  ["money", "data model", "precision"], ["invoices/models.py", "billing/models.py"], [])
O(24, 6, "change", "Migration converting DecimalField amounts to cents", "invoices/0047_amounts_to_cents",
  "A three-step migration adds amount_cents columns, backfills them with ROUND(amount * 100), then drops the old columns. The backfill ran in batches of 5000 to avoid long locks on invoices_invoiceline.",
  ["invoices/migrations/0047_amounts_to_cents.py", "RunPython backfill in batches of 5000", "Took 3m40s on a production snapshot"],
  ["django migration", "money"], ["invoices/models.py"], ["invoices/migrations/0047_amounts_to_cents.py", "invoices/models.py"])

O(25, 7, "decision", "Switched billing cycle lock from Redis to Postgres advisory locks", "Redis lock expired mid-run",
  "The July run took 14 minutes, longer than the 600s Redis lock timeout, so a beat retry started a second run. Claude replaced the Redis lock with pg_try_advisory_lock because the lock then lives as long as the database session and there is no TTL to guess.",
  ["Redis lock timeout 600s < 14 min run time", "Advisory lock key 712001 for the billing cycle", "Removed redis dependency from billing/locks.py"],
  ["locking", "postgres advisory lock", "concurrency"], ["billing/locks.py", "billing/tasks.py"], [])
O(26, 7, "feature", "advisory_lock context manager in billing/locks.py", "Wraps pg_try_advisory_lock / pg_advisory_unlock",
  "The helper opens a cursor on the default connection, tries the lock, yields a boolean and always unlocks in finally. run_billing_cycle exits early when the lock is held.",
  ["billing/locks.py advisory_lock(key) context manager", "SELECT pg_try_advisory_lock(%s)", "Unlock in finally block"],
  ["locking", "postgres advisory lock"], ["billing/locks.py"], ["billing/locks.py", "billing/tasks.py"])
O(27, 7, "bugfix", "Celery tasks now retry on Stripe rate limits", "autoretry_for RateLimitError with backoff",
  "During the cycle, bulk invoice creation hit stripe.error.RateLimitError: Request rate limit exceeded and the tasks failed permanently. sync_invoice_to_stripe now auto-retries with exponential backoff and jitter up to 5 times.",
  ["billing/tasks.py @shared_task(autoretry_for=(stripe.error.RateLimitError,), retry_backoff=True, retry_jitter=True, max_retries=5)",
   "Stripe live limit is 100 read/write ops per second"],
  ["retry", "rate limiting", "celery", "stripe"], ["billing/tasks.py"], ["billing/tasks.py"])
O(28, 7, "change", "Pinned Stripe API version", "stripe.api_version = '2024-06-20'",
  "The account default API version differed between test and live accounts, so webhook payload shapes differed. The client now sends an explicit API version.",
  ["payments/stripe_client.py sets stripe.api_version = '2024-06-20'", "stripe-python 10.x"],
  ["stripe", "api version"], ["payments/stripe_client.py"], ["payments/stripe_client.py"])

O(29, 8, "change", "Upgraded Django 4.2 to 5.0", "Plus djangorestframework 3.15 and django-celery-beat 2.6",
  "The upgrade was mostly mechanical; deprecation warnings from 4.2 had been fixed earlier. Claude ran the test suite with -W error::DeprecationWarning to catch remaining issues.",
  ["requirements.txt: Django==5.0.6, djangorestframework==3.15.1, django-celery-beat==2.6.0", "Python stays at 3.11"],
  ["dependency upgrade", "django"], ["requirements.txt"], ["requirements.txt"])
O(30, 8, "bugfix", "Replaced removed django.utils.timezone.utc", "AttributeError after Django 5.0 upgrade",
  "Three modules crashed on import with AttributeError: module 'django.utils.timezone' has no attribute 'utc'. They now use datetime.timezone.utc from the standard library.",
  ["AttributeError: module 'django.utils.timezone' has no attribute 'utc'", "Fixed in billing/periods.py, invoices/services.py, payments/webhooks.py"],
  ["django", "dependency upgrade", "timezone"], ["billing/periods.py"], ["billing/periods.py", "invoices/services.py", "payments/webhooks.py"])
O(31, 8, "bugfix", "Invoice API returned amounts as strings after the cents migration", "Frontend showed NaN totals",
  "The serializer still used a DecimalField, which DRF renders as a string, while the dashboard expected numbers. InvoiceSerializer now exposes total_cents as an integer and a formatted total_display.",
  ["invoices/api/serializers.py InvoiceSerializer.total_cents IntegerField", "total_display uses babel format_currency"],
  ["api", "serializers", "money"], ["invoices/api/serializers.py"], ["invoices/api/serializers.py"])
O(32, 8, "change", "Sped up the test suite with --reuse-db", "pytest-django 4.8",
  "Creating the test database with 120 migrations took 40s per run. pytest.ini now passes --reuse-db and CI passes --create-db explicitly.",
  ["pytest.ini addopts = --reuse-db", "CI: pytest --create-db -n 4", "Local run 95s -> 52s"],
  ["tests", "performance"], ["pytest.ini"], ["pytest.ini", ".github/workflows/ci.yml"])

O(33, 9, "change", "Invoice list endpoint went from 412 queries to 6", "select_related customer, prefetch_related lines",
  "The customer portal invoice list was slow for large accounts. Django Debug Toolbar showed an N+1 on customer and invoice lines; the viewset queryset now uses select_related and prefetch_related, p95 dropped from 2.8s to 180ms.",
  ["invoices/api/views.py InvoiceViewSet.get_queryset adds select_related('customer').prefetch_related('lines')", "412 -> 6 queries for 100 invoices", "p95 2.8s -> 180ms"],
  ["performance", "n+1 queries", "orm"], ["invoices/api/views.py"], ["invoices/api/views.py"])
O(34, 9, "change", "Added composite index on invoices (customer_id, status, due_date)", "Speeds up overdue lookups",
  "Dunning and the portal both filter invoices by customer and status ordered by due date. EXPLAIN showed a sequential scan over 2.1M rows; the new index is created CONCURRENTLY via AddIndexConcurrently.",
  ["invoices/migrations/0052_invoice_customer_status_due_idx.py uses AddIndexConcurrently", "Migration sets atomic = False"],
  ["performance", "index", "django migration"], ["invoices/models.py"], ["invoices/migrations/0052_invoice_customer_status_due_idx.py", "invoices/models.py"])
O(35, 9, "discovery", "Dunning emails are sent 3, 7 and 14 days after a failed payment", "billing/dunning.py DUNNING_STEPS",
  "The dunning process is a daily Celery task that walks overdue invoices and sends the next reminder. After the 14-day email the subscription is suspended.",
  ["billing/dunning.py DUNNING_STEPS = (3, 7, 14)", "Suspension happens in suspend_overdue_subscriptions()", "Emails use templates/emails/dunning_*.html"],
  ["dunning", "emails"], ["billing/dunning.py"], [])
O(36, 9, "bugfix", "Stopped dunning reminders to cancelled customers", "Overdue query ignored subscription status",
  "A customer who cancelled still got 'your payment failed' emails for an old invoice. The dunning query now excludes customers whose subscription is canceled and voids their open invoices instead.",
  ["billing/dunning.py filters subscription__status__in=['active', 'past_due']", "Open invoices of canceled customers get status='void'"],
  ["dunning", "emails", "subscriptions"], ["billing/dunning.py"], ["billing/dunning.py", "tests/billing/test_dunning.py"])

O(37, 10, "bugfix", "Advisory lock never released behind PgBouncer", "Session-level lock held by a different server connection",
  "Production uses PgBouncer in transaction pooling mode, so pg_try_advisory_lock and pg_advisory_unlock ran on different backend connections. The lock stayed held and every later run logged 'billing cycle already running' until the connection was recycled.",
  ["PgBouncer pool_mode = transaction", "pg_locks showed advisory lock 712001 held by an idle backend", "August cycle skipped for 2 hours"],
  ["locking", "pgbouncer", "postgres advisory lock"], ["billing/locks.py", "deploy/pgbouncer.ini"], [])
O(38, 10, "decision", "Reverted billing cycle lock back to Redis, with a renewal thread", "Advisory locks unreliable under PgBouncer transaction pooling",
  "Rather than route the billing task through a session-pooled connection, the team went back to a Redis lock, this time extended every 60s by a watchdog thread so long runs keep it. This replaces the advisory-lock approach from July.",
  ["billing/locks.py RenewingRedisLock(name, ttl=900, renew_every=60)", "Watchdog calls lock.extend(900, replace_ttl=True)", "advisory_lock helper deleted"],
  ["locking", "redis", "concurrency"], ["billing/locks.py"], ["billing/locks.py", "billing/tasks.py"])
O(39, 10, "change", "Billing lock TTL settings moved to settings", "BILLING_LOCK_TTL=900, BILLING_LOCK_RENEW=60",
  "The lock timings are now configurable per environment so staging can use a short TTL in tests.",
  ["config/settings/base.py BILLING_LOCK_TTL = 900", "BILLING_LOCK_RENEW = 60"],
  ["configuration", "locking"], [], ["config/settings/base.py"])
O(40, 10, "change", "Test that the Redis lock is renewed during long runs", "Uses fakeredis and a frozen clock",
  "The test holds the lock for a simulated 20 minutes and checks the TTL never drops below the renewal threshold, and that a second acquirer fails.",
  ["tests/billing/test_locks.py::test_lock_renewed", "fakeredis 2.23"],
  ["tests", "locking"], [], ["tests/billing/test_locks.py"])

O(41, 11, "feature", "Sales tax calculated via Stripe Tax", "tax_behavior exclusive, automatic_tax enabled",
  "Tax had been a hand-maintained table of rates. Invoices now ask Stripe Tax for the calculation at finalization and store the returned tax amount per line.",
  ["invoices/tax.py calculate_tax(invoice) calls stripe.tax.Calculation.create", "Tax lines stored with jurisdiction and rate"],
  ["tax", "stripe"], ["invoices/services.py"], ["invoices/tax.py", "invoices/services.py"])
O(42, 11, "bugfix", "VAT total off by a cent on multi-line invoices", "Rounded per line with ROUND_HALF_EVEN",
  "German customers saw totals one cent lower than their own calculation. Tax was rounded per line using banker's rounding; it is now summed unrounded and rounded once per invoice with ROUND_HALF_UP as the tax advisor required.",
  ["invoices/tax.py uses Decimal.quantize(Decimal('1'), rounding=ROUND_HALF_UP) on the invoice total", "Affected 312 invoices in September"],
  ["tax", "rounding", "money"], ["invoices/tax.py"], ["invoices/tax.py", "tests/invoices/test_tax.py"])
O(43, 11, "discovery", "EU reverse charge depends on a validated VAT id", "customers.tax_id_verified flag",
  "Reverse charge is only applied when the customer's VAT id has been validated through VIES; unvalidated ids are charged normal VAT. The flag is set asynchronously by a Celery task.",
  ["customers/tasks.py verify_vat_id uses the VIES SOAP service", "Customer.tax_id_verified boolean"],
  ["tax", "vat", "eu"], ["customers/tasks.py", "customers/models.py"], [])
O(44, 11, "change", "Added STRIPE_TAX_ENABLED feature flag", "Defaults to False outside production",
  "Stripe Tax calls cost money per calculation and fail in test mode without registrations, so the integration sits behind a setting.",
  ["config/settings/base.py STRIPE_TAX_ENABLED = env.bool('STRIPE_TAX_ENABLED', False)", "Fallback uses legacy rate table"],
  ["feature flag", "tax"], [], ["config/settings/base.py", "invoices/tax.py"])

O(45, 12, "bugfix", "Celery worker OOM-killed during bulk PDF generation", "Memory grew to 3.9 GB rendering 3000 invoices",
  "The month-end job rendered every PDF in one task and the container was killed with exit code 137. The job now fans out one task per 50 invoices and workers restart after 200 tasks to release WeasyPrint's cached memory.",
  ["Container killed: OOMKilled, exit code 137", "CELERY_WORKER_MAX_TASKS_PER_CHILD = 200", "generate_pdfs_for_cycle chunks of 50"],
  ["memory", "celery", "pdf generation"], ["invoices/tasks.py"], ["invoices/tasks.py", "config/settings/base.py"])
O(46, 12, "change", "Dedicated 'pdf' Celery queue with concurrency 4", "Default queue stays at concurrency 8",
  "PDF rendering is memory heavy and was starving webhook processing. A separate worker deployment consumes only the pdf queue with --concurrency=4.",
  ["CELERY_TASK_ROUTES = {'invoices.tasks.render_*': {'queue': 'pdf'}}", "deploy/worker-pdf.yaml: celery worker -Q pdf --concurrency=4", "default worker: --concurrency=8"],
  ["celery", "queues", "deployment"], ["deploy/worker.yaml"], ["config/settings/base.py", "deploy/worker-pdf.yaml"])
O(47, 12, "bugfix", "Webhook returned 500 for unknown event types", "KeyError: 'invoice.finalization_failed'",
  "Stripe started sending invoice.finalization_failed, which was missing from the dispatch dict, so the view raised KeyError and Stripe kept retrying. Unknown events are now acknowledged with 200 and logged at info level.",
  ["KeyError: 'invoice.finalization_failed' in payments/webhooks.py", "Returns HttpResponse(status=200) for unhandled types"],
  ["webhooks", "error handling"], ["payments/webhooks.py"], ["payments/webhooks.py"])
O(48, 12, "change", "Set Stripe client timeout to 20s with 2 network retries", "Previous default was 80s",
  "A slow Stripe response held a gunicorn worker for 80 seconds. The client is now created with a 20s timeout and stripe-python's built-in max_network_retries=2, which uses idempotency keys automatically for POSTs.",
  ["payments/stripe_client.py: stripe.max_network_retries = 2", "RequestsClient(timeout=20)", "gunicorn timeout is 30s"],
  ["timeout", "stripe", "retry"], ["payments/stripe_client.py"], ["payments/stripe_client.py"])

O(49, 13, "refactor", "Split payments/webhooks.py into per-event handlers", "Registry decorator @handles('invoice.paid')",
  "The webhook view had grown to 600+ lines with one big if/elif chain. Each event type now lives in payments/handlers/<area>.py and registers itself; the view only verifies, deduplicates and dispatches.",
  ["payments/handlers/__init__.py registry dict + handles() decorator", "payments/handlers/invoices.py, subscriptions.py, refunds.py", "payments/webhooks.py down to 80 lines"],
  ["refactor", "webhooks"], ["payments/webhooks.py"], ["payments/webhooks.py", "payments/handlers/__init__.py", "payments/handlers/invoices.py", "payments/handlers/subscriptions.py"])
O(50, 13, "bugfix", "Webhook signature verification failed after adding request logging middleware", "SignatureVerificationError on every event",
  "After the new logging middleware re-serialised JSON bodies, every webhook failed with stripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload. Verification must use the exact raw bytes, so the middleware now skips /webhooks/ and the view uses request.body.",
  ["stripe.error.SignatureVerificationError: No signatures found matching the expected signature for payload", "core/middleware.py RequestLogMiddleware skips paths under /webhooks/"],
  ["webhooks", "signature verification", "middleware"], ["core/middleware.py", "payments/webhooks.py"], ["core/middleware.py"])
O(51, 13, "change", "Support two webhook signing secrets during rotation", "STRIPE_WEBHOOK_SECRETS list",
  "To rotate the endpoint secret without downtime, the view tries each configured secret in turn.",
  ["config/settings/base.py STRIPE_WEBHOOK_SECRETS = env.list(...)", "Old secret removed after 24h"],
  ["secrets rotation", "webhooks"], [], ["config/settings/base.py", "payments/webhooks.py"])
O(52, 13, "discovery", "Partial refunds are not reflected on invoices", "refund handler only updates Payment",
  "The charge.refunded handler marks the Payment as refunded but the invoice still shows as fully paid, so customers have no document for partial refunds. Accounting asked for credit notes.",
  ["payments/handlers/refunds.py handle_charge_refunded", "Invoice.status stays 'paid' after partial refund"],
  ["refunds", "credit notes"], ["payments/handlers/refunds.py"], [])

O(53, 14, "feature", "Credit notes for partial refunds", "CreditNote model with CN- numbering",
  "Refund events now create a CreditNote referencing the original invoice with negative lines, numbered from its own yearly sequence, and render a PDF with the same template family.",
  ["invoices/models.py CreditNote, CreditNoteLine", "invoices/migrations/0058_creditnote.py", "Numbering via InvoiceNumberAllocator prefix 'CN'"],
  ["credit notes", "refunds"], ["payments/handlers/refunds.py"], ["invoices/models.py", "invoices/migrations/0058_creditnote.py", "payments/handlers/refunds.py"])
O(54, 14, "bugfix", "Credit note PDF showed a double minus sign", "Rendered '--$12.00'",
  "The template prefixed a minus sign to amounts that were already negative. The money template filter now formats the sign itself and the template dropped the hard-coded '-'.",
  ["invoices/templatetags/money.py format_money handles negatives", "invoices/templates/invoices/credit_note.html"],
  ["pdf generation", "templates", "credit notes"], ["invoices/templates/invoices/credit_note.html"], ["invoices/templatetags/money.py", "invoices/templates/invoices/credit_note.html"])
O(55, 14, "decision", "Render invoice PDFs lazily on first download", "Instead of eagerly at finalization",
  "Only about 30% of invoice PDFs are ever downloaded, yet month-end rendered all of them. The team decided to render on first request and cache the result in S3, keeping eager rendering only for customers with email delivery enabled.",
  ["invoices/api/views.py InvoicePdfView renders if no S3 object exists", "Customers with send_invoice_email=True still rendered at finalization", "Month-end PDF job time 47 min -> 12 min"],
  ["pdf generation", "caching", "performance"], ["invoices/api/views.py", "invoices/tasks.py"], ["invoices/api/views.py", "invoices/tasks.py"])
O(56, 14, "refactor", "Squashed invoices migrations 0001-0050", "0001_squashed_0050",
  "Fresh test databases spent most time on old migrations. squashmigrations produced one file; RunPython steps that only mattered historically were elided.",
  ["python manage.py squashmigrations invoices 0001 0050", "invoices/migrations/0001_squashed_0050.py", "Old files removed once all environments passed 0050"],
  ["django migration", "refactor"], [], ["invoices/migrations/0001_squashed_0050.py"])

Q("paraphrase", "why were people billed two times when the payment provider resent events", [5, 6])
Q("paraphrase", "customers upgrading mid February paid the wrong partial amount", [21, 20])
Q("paraphrase", "background workers killed for using too much RAM while making documents at month end", [45, 46])
Q("paraphrase", "the monthly run started the evening before it should have", [15, 16])
Q("file", "what changed in invoices/numbering.py", [17, 18])
Q("file", "core/middleware.py webhook", [50])
Q("file", "what changed in payments/stripe_client.py", [48, 28])
Q("error", "AttributeError: module 'django.utils.timezone' has no attribute 'utc'", [30])
Q("error", "No signatures found matching the expected signature for payload", [50])
Q("error", "duplicate key value violates unique constraint \"invoices_invoice_number_key\"", [17])
Q("error", "cannot load library libpango-1.0-0", [9])
Q("decision", "why do we keep money as integer cents", [23])
Q("decision", "why did we stay with WeasyPrint instead of reportlab", [10])
Q("keyword", "celery beat timezone", [15, 16])
Q("keyword", "invoice list n+1", [33])
Q("keyword", "dunning cancelled customers", [36])
Q("temporal", "what lock do we currently use to stop two billing cycles running at once", [38, 37])
Q("temporal", "when are invoice PDFs generated now", [55])

# ---------------------------------------------------------------------------
# 2. pulse-dashboard: TypeScript / React 18 / Vite / TanStack Query
# ---------------------------------------------------------------------------
project("dash", "/home/dev/pulse-dashboard", "2026-06-09", 14)

O(1, 1, "discovery", "Explored the dashboard codebase structure", "Vite + React 18 SPA organised by feature folders",
  "Claude surveyed the repo before the first task. Features live under src/features (alerts, metrics, services), all HTTP goes through src/api/client.ts, and server state uses TanStack Query v5.",
  ["src/features/{alerts,metrics,services}", "src/api/client.ts wraps fetch and attaches the bearer token", "Redux Toolkit store in src/store/index.ts holds UI state"],
  ["project structure", "react"], ["src/main.tsx", "src/api/client.ts", "src/store/index.ts"], [])
O(2, 1, "discovery", "Auth uses OIDC via oidc-client-ts with tokens in sessionStorage", "Login redirects to Keycloak",
  "The app authenticates with Keycloak through oidc-client-ts. Tokens are kept in sessionStorage so each tab logs in separately, and silent renew runs via an iframe.",
  ["src/auth/oidc.ts UserManager config, automaticSilentRenew: true", "Keycloak realm 'ops', client 'pulse-web'"],
  ["authentication", "oidc"], ["src/auth/oidc.ts"], [])
O(3, 1, "change", "Pinned pnpm 9 via corepack", "packageManager field in package.json",
  "CI and laptops used different pnpm majors, producing lockfile churn. package.json now declares packageManager pnpm@9.4.0 and CI runs corepack enable.",
  ["package.json \"packageManager\": \"pnpm@9.4.0\"", ".github/workflows/ci.yml runs corepack enable"],
  ["tooling", "package manager"], ["package.json"], ["package.json", ".github/workflows/ci.yml"])
O(4, 1, "bugfix", "Vitest component tests failed with window is not defined", "Test environment defaulted to node",
  "New component tests crashed with ReferenceError: window is not defined because vitest.config.ts had no environment set. Set environment: 'jsdom' and added @testing-library/jest-dom in the setup file.",
  ["ReferenceError: window is not defined", "vitest.config.ts test.environment = 'jsdom'", "src/test/setup.ts imports @testing-library/jest-dom/vitest"],
  ["tests", "vitest", "jsdom"], ["vitest.config.ts"], ["vitest.config.ts", "src/test/setup.ts"])

O(5, 2, "feature", "Live metrics via polling every 5 seconds", "refetchInterval: 5000 in useMetrics",
  "The metrics page needed near-live values. As a first step useMetrics polls the /metrics/query endpoint every 5s while the tab is visible.",
  ["src/features/metrics/useMetrics.ts refetchInterval: 5000", "refetchIntervalInBackground: false"],
  ["live updates", "polling", "react query"], ["src/features/metrics/useMetrics.ts"], ["src/features/metrics/useMetrics.ts"])
O(6, 2, "bugfix", "Charts flashed empty on every poll", "Query key changed with the time window",
  "Because the rolling time window is part of the query key, each poll was a new query and charts showed the loading state. Using placeholderData: keepPreviousData keeps the old series on screen until new data arrives.",
  ["useMetrics uses placeholderData: keepPreviousData", "Loading skeleton only on first load"],
  ["react query", "ui flicker"], ["src/features/metrics/useMetrics.ts"], ["src/features/metrics/useMetrics.ts"])
O(7, 2, "discovery", "API client has no request timeout", "A hung backend leaves spinners forever",
  "fetch has no default timeout, and the client never aborted requests, so when the metrics backend hung the UI spun indefinitely.",
  ["src/api/client.ts apiFetch() has no AbortSignal", "Backend p99 is 1.2s; hangs seen during deploys"],
  ["timeout", "http client"], ["src/api/client.ts"], [])
O(8, 2, "change", "Added a 15s timeout to the API client", "AbortSignal.timeout combined with caller signals",
  "apiFetch now combines React Query's abort signal with AbortSignal.timeout(15000) using AbortSignal.any, and maps the resulting TimeoutError to a typed ApiTimeoutError shown as a toast.",
  ["src/api/client.ts DEFAULT_TIMEOUT_MS = 15000", "AbortSignal.any([signal, AbortSignal.timeout(15000)])", "ApiTimeoutError class in src/api/errors.ts"],
  ["timeout", "http client", "abort"], ["src/api/client.ts"], ["src/api/client.ts", "src/api/errors.ts"])

O(9, 3, "decision", "Chose Zustand over Redux Toolkit for UI state", "Server state stays in TanStack Query",
  "Once server data moved into React Query, the Redux store only held filters, sidebar state and theme. The team picked Zustand because it needs no provider or action boilerplate for that little state and its selectors avoid re-rendering the whole tree.",
  ["Redux store only had 3 slices left", "Zustand 4.5 chosen; Jotai considered but atoms felt too granular", "React Query remains the server-state cache"],
  ["state management", "library choice", "zustand"], ["src/store/index.ts"], [])
O(10, 3, "refactor", "Migrated filters slice to a Zustand store", "src/stores/filters.ts",
  "The filters slice, its selectors and the dispatch calls across 14 components were replaced by useFilters with shallow selectors.",
  ["src/stores/filters.ts create<FiltersState>()", "Removed src/store/filtersSlice.ts", "Components use useFilters(s => s.timeRange)"],
  ["refactor", "state management", "zustand"], ["src/store/filtersSlice.ts"], ["src/stores/filters.ts", "src/features/metrics/MetricsPage.tsx"])
O(11, 3, "bugfix", "Fixed setState-during-render warning in Sidebar", "Store update called inside render",
  "After the migration the console showed Warning: Cannot update a component (`Sidebar`) while rendering a different component (`ServiceList`). ServiceList called setSelectedService during render when the list changed; moved it into a useEffect.",
  ["Warning: Cannot update a component (`Sidebar`) while rendering a different component (`ServiceList`)", "src/features/services/ServiceList.tsx"],
  ["react", "render warnings"], ["src/features/services/ServiceList.tsx"], ["src/features/services/ServiceList.tsx"])
O(12, 3, "change", "Removed Redux dependencies", "Bundle 38 KB smaller gzipped",
  "With the last slice migrated, @reduxjs/toolkit and react-redux were removed and the Provider dropped from main.tsx.",
  ["pnpm remove @reduxjs/toolkit react-redux", "Main chunk -38 KB gzip"],
  ["dependencies", "bundle size"], ["package.json"], ["package.json", "src/main.tsx"])

O(13, 4, "bugfix", "Time range picker sent the wrong day to the API", "startOfDay used browser local time",
  "Users in Asia picking 'yesterday' saw data for the day before. The picker computed startOfDay in local time then sent toISOString(), shifting the date; ranges are now built in UTC with date-fns-tz.",
  ["src/components/TimeRangePicker.tsx", "Uses fromZonedTime(startOfDay(d), 'UTC')", "API expects UTC ISO timestamps"],
  ["timezone", "dates"], ["src/components/TimeRangePicker.tsx"], ["src/components/TimeRangePicker.tsx", "src/lib/time.ts"])
O(14, 4, "feature", "Filters synced to the URL query string", "Shareable dashboard links",
  "On-call engineers wanted to paste links with the same service and time range. The filters store now serialises to ?service=&from=&to= via useSearchParams.",
  ["src/stores/filters.ts serialize()/parse()", "src/hooks/useUrlFilters.ts"],
  ["url state", "routing"], ["src/stores/filters.ts"], ["src/hooks/useUrlFilters.ts", "src/stores/filters.ts"])
O(15, 4, "bugfix", "Fixed infinite render loop in URL filter sync", "Maximum update depth exceeded",
  "useUrlFilters wrote to the URL whenever the store changed and read the URL into the store whenever it changed, producing Error: Maximum update depth exceeded. The hook now compares serialised values before writing either side.",
  ["Error: Maximum update depth exceeded. This can happen when a component calls setState inside useEffect", "src/hooks/useUrlFilters.ts compares serialize(state) === location.search"],
  ["react", "infinite loop", "url state"], ["src/hooks/useUrlFilters.ts"], ["src/hooks/useUrlFilters.ts"])
O(16, 4, "change", "Unit tests for filter serialisation round-trip", "vitest table tests",
  "Added table-driven tests checking that parse(serialize(x)) equals x for relative and absolute ranges and multiple services.",
  ["src/stores/filters.test.ts 12 cases"],
  ["tests", "url state"], [], ["src/stores/filters.test.ts"])

O(17, 5, "discovery", "Overview dashboard with 40 charts takes 6.5s to render", "Profiler shows Recharts SVG reconciliation",
  "React Profiler showed the overview page spending most of its time reconciling thousands of SVG path nodes from Recharts, with each poll re-rendering every chart.",
  ["Overview page: 40 charts x 3 series x 720 points", "Commit time 6.5s on a mid-range laptop", "Recharts renders one SVG element per point for dots"],
  ["performance", "charts", "profiling"], ["src/features/metrics/OverviewPage.tsx"], [])
O(18, 5, "decision", "Switched charting from Recharts to Apache ECharts", "Canvas renderer handles dense time series",
  "Claude compared Recharts, uPlot and ECharts. ECharts was chosen because its canvas renderer copes with dense series and it still offers the tooltips, legends and zoom the team relies on; uPlot was faster but would require rebuilding those interactions.",
  ["echarts 5.5 with echarts-for-react 3", "uPlot rejected: minimal API, custom tooltips needed", "Recharts kept nowhere after migration"],
  ["charts", "library choice", "performance"], ["src/features/metrics/OverviewPage.tsx"], [])
O(19, 5, "refactor", "Introduced TimeSeriesChart wrapper component", "Single place for ECharts options",
  "All metrics charts now go through src/components/charts/TimeSeriesChart.tsx, which builds the ECharts option from a MetricSeries[] prop and handles resize.",
  ["src/components/charts/TimeSeriesChart.tsx", "Props: series, unit, height, onZoom", "Uses ResizeObserver instead of window resize"],
  ["refactor", "charts"], [], ["src/components/charts/TimeSeriesChart.tsx", "src/features/metrics/OverviewPage.tsx"])
O(20, 5, "change", "Overview render time dropped from 6.5s to 1.4s", "After ECharts migration and memoised options",
  "With canvas charts and useMemo on the option objects, the overview page commits in 1.4s and polling no longer blocks input.",
  ["Commit 6.5s -> 1.4s", "useMemo keyed on series reference", "sampling: 'lttb' for series over 1000 points"],
  ["performance", "charts"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/components/charts/TimeSeriesChart.tsx"])

O(21, 6, "decision", "Replace metrics polling with a WebSocket stream", "Backend now exposes /ws/metrics",
  "Polling 40 charts every 5s cost 480 requests a minute per open tab. The backend team added a WebSocket endpoint that pushes new points, and the dashboard will subscribe instead of polling.",
  ["wss://pulse-api.internal/ws/metrics", "Subscription message {type:'subscribe', series:[...]}", "Polling stays as fallback"],
  ["live updates", "websocket"], ["src/features/metrics/useMetrics.ts"], [])
O(22, 6, "feature", "useLiveMetrics hook over WebSocket", "Merges pushed points into the React Query cache",
  "The hook opens one socket, subscribes for the visible series and appends incoming points to the cached query data via queryClient.setQueryData.",
  ["src/features/metrics/useLiveMetrics.ts", "queryClient.setQueryData(['metrics', id], append)", "Trims points older than the time window"],
  ["live updates", "websocket", "react query"], [], ["src/features/metrics/useLiveMetrics.ts"])
O(23, 6, "bugfix", "WebSocket reconnect storm after backend deploy", "All tabs reconnected every 100ms",
  "When the backend restarted, each tab tried to reconnect immediately in a tight loop, hammering the new pods. Reconnects now use exponential backoff from 1s to 30s with full jitter.",
  ["src/lib/reconnect.ts backoff(attempt) = random(0, min(30000, 1000 * 2**attempt))", "Attempt counter resets after 60s connected"],
  ["websocket", "retry", "backoff"], ["src/features/metrics/useLiveMetrics.ts"], ["src/lib/reconnect.ts", "src/features/metrics/useLiveMetrics.ts"])
O(24, 6, "bugfix", "TypeScript error after tightening types in useLiveMetrics", "TS2322 undefined not assignable",
  "tsc reported error TS2322: Type 'MetricPoint[] | undefined' is not assignable to type 'MetricPoint[]' where the cached data might not exist yet. The updater now returns early when old data is undefined.",
  ["error TS2322: Type 'MetricPoint[] | undefined' is not assignable to type 'MetricPoint[]'", "setQueryData updater: old => old ? [...old, p] : old"],
  ["typescript", "type errors"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])

O(25, 7, "change", "Enabled strict mode and noUncheckedIndexedAccess", "tsconfig.json",
  "strict had been off since the project start. Turning it on surfaced 143 errors, mostly implicit any in event handlers and unchecked array indexing; all fixed in one pass.",
  ["tsconfig.json \"strict\": true, \"noUncheckedIndexedAccess\": true", "143 errors fixed"],
  ["typescript", "configuration"], ["tsconfig.json"], ["tsconfig.json"])
O(26, 7, "refactor", "API types generated from the OpenAPI spec", "openapi-typescript replaces hand-written interfaces",
  "Hand-written response types had drifted from the backend. src/api/schema.d.ts is now generated by openapi-typescript in a pnpm gen:api script and checked in.",
  ["pnpm gen:api -> openapi-typescript https://pulse-api.internal/openapi.json -o src/api/schema.d.ts", "Removed src/api/types.ts"],
  ["refactor", "openapi", "typescript"], ["src/api/types.ts"], ["src/api/schema.d.ts", "package.json"])
O(27, 7, "bugfix", "React Query retried 401 and 403 responses three times", "Slow redirect to login on expired session",
  "The default retry: 3 meant an expired session waited through three backoff retries (about 7s) before redirecting to login. The retry option is now a function that never retries 4xx and retries 5xx and network errors twice.",
  ["src/api/queryClient.ts retry: (count, err) => !(err instanceof ApiError && err.status < 500) && count < 2", "Redirect to login now immediate"],
  ["retry", "react query", "authentication"], ["src/api/queryClient.ts"], ["src/api/queryClient.ts"])
O(28, 7, "bugfix", "Parallel 401s triggered several token refreshes at once", "Single-flight refresh promise",
  "When the access token expired, every in-flight request got 401 and each started its own refresh, and Keycloak rejected the reused refresh token with invalid_grant. A shared refresh promise now makes concurrent requests wait for one refresh.",
  ["Keycloak error: invalid_grant 'Token is not active'", "src/auth/refresh.ts let inflight: Promise<User> | null", "client.ts retries the original request once after refresh"],
  ["authentication", "race condition", "token refresh"], ["src/api/client.ts", "src/auth/oidc.ts"], ["src/auth/refresh.ts", "src/api/client.ts"])

O(29, 8, "change", "Upgraded Vite 4 to 5 and @vitejs/plugin-react 4.3", "Node 18+ required",
  "Vite 5 brings Rollup 4 and faster cold starts. Dev server cold start went from 2.9s to 1.7s.",
  ["vite 5.3.1, @vitejs/plugin-react 4.3.1", "Cold start 2.9s -> 1.7s"],
  ["dependency upgrade", "vite"], ["vite.config.ts", "package.json"], ["package.json", "pnpm-lock.yaml"])
O(30, 8, "bugfix", "Vite could not resolve @/ imports after the upgrade", "Alias pointed at a relative string",
  "The dev server failed with [vite] Internal server error: Failed to resolve import \"@/components/charts/TimeSeriesChart\" from \"src/features/metrics/OverviewPage.tsx\". The alias now uses fileURLToPath(new URL('./src', import.meta.url)).",
  ["[vite] Internal server error: Failed to resolve import \"@/components/charts/TimeSeriesChart\"", "vite.config.ts resolve.alias {'@': fileURLToPath(new URL('./src', import.meta.url))}"],
  ["vite", "module resolution", "build"], ["vite.config.ts"], ["vite.config.ts"])
O(31, 8, "change", "Node 20 for local development and CI", ".nvmrc and setup-node",
  "Node 18 leaves maintenance soon; .nvmrc now says 20.15 and CI uses actions/setup-node with node-version-file.",
  [".nvmrc: 20.15.0", "ci.yml setup-node node-version-file: .nvmrc"],
  ["tooling", "node version"], [], [".nvmrc", ".github/workflows/ci.yml"])
O(32, 8, "bugfix", "Flaky Playwright test waiting for chart canvas", "Canvas existed before data was drawn",
  "e2e/overview.spec.ts clicked a chart point before ECharts finished its first render and failed about 10% of runs on CI. TimeSeriesChart now sets data-ready='true' after the 'finished' event and the test waits for that attribute.",
  ["e2e/overview.spec.ts waits for [data-ready=true]", "ECharts 'finished' event sets the attribute", "Retries on CI set to 0 to surface flakes"],
  ["tests", "playwright", "flaky test"], ["e2e/overview.spec.ts"], ["e2e/overview.spec.ts", "src/components/charts/TimeSeriesChart.tsx"])

O(33, 9, "feature", "CSV export for the alerts table", "Exports current filters, not just the visible page",
  "The export button fetches all matching alerts through the cursor API and builds a CSV in the browser with a Blob download.",
  ["src/features/alerts/exportCsv.ts", "Streams pages of 500 until cursor is null"],
  ["csv export", "alerts"], ["src/features/alerts/AlertsTable.tsx"], ["src/features/alerts/exportCsv.ts", "src/features/alerts/AlertsTable.tsx"])
O(34, 9, "bugfix", "CSV export broke on commas and umlauts in Excel", "Missing quoting and BOM",
  "Alert messages with commas split into extra columns and German text showed as mojibake (Ã¼) when opened in Excel. Fields are now quoted per RFC 4180 and the file starts with a UTF-8 BOM.",
  ["exportCsv.ts escapes quotes by doubling them", "Prepends '\\uFEFF' BOM", "Excel on Windows assumes cp1252 without BOM"],
  ["csv export", "encoding"], ["src/features/alerts/exportCsv.ts"], ["src/features/alerts/exportCsv.ts"])
O(35, 9, "feature", "Virtualised alerts table for 10k rows", "@tanstack/react-virtual",
  "Rendering 10,000 alert rows froze the tab for several seconds. The table now renders only visible rows with @tanstack/react-virtual; scrolling stays at 60fps.",
  ["@tanstack/react-virtual 3.8", "Row height fixed at 36px", "Initial render 3.4s -> 90ms for 10k rows"],
  ["performance", "virtualization", "tables"], ["src/features/alerts/AlertsTable.tsx"], ["src/features/alerts/AlertsTable.tsx"])
O(36, 9, "discovery", "Alerts API paginates with an opaque cursor, max 500 per page", "limit above 500 returns 400",
  "Requesting limit=1000 returned HTTP 400 {\"error\":\"limit must be <= 500\"}. Pagination is cursor-based only; there is no total count.",
  ["GET /alerts?cursor=...&limit=500", "400 when limit > 500", "No total count header"],
  ["pagination", "api"], ["src/api/schema.d.ts"], [])

O(37, 10, "bugfix", "Chart axis labels unreadable in dark mode", "ECharts theme not switched",
  "Dark mode changed the page background but charts kept dark grey axis labels. Registered 'pulse-light' and 'pulse-dark' ECharts themes and the wrapper re-inits with the right theme when it changes.",
  ["src/components/charts/theme.ts registerTheme('pulse-dark', ...)", "echarts.init(el, theme) on theme change"],
  ["dark mode", "charts", "theming"], ["src/components/charts/theme.ts"], ["src/components/charts/theme.ts"])
O(38, 10, "feature", "Dark mode toggle persisted in localStorage", "zustand persist middleware",
  "A theme store with the persist middleware remembers the choice; 'system' follows prefers-color-scheme.",
  ["src/stores/theme.ts persist(..., {name: 'pulse-theme'})", "Values: 'light' | 'dark' | 'system'"],
  ["dark mode", "zustand", "persistence"], [], ["src/stores/theme.ts", "src/components/ThemeToggle.tsx"])
O(39, 10, "bugfix", "Flash of light theme on page load", "Persisted store rehydrates after first paint",
  "Dark-mode users saw a white flash on every load because zustand rehydrates after React mounts. A tiny inline script in index.html reads localStorage and sets data-theme on <html> before the bundle loads.",
  ["index.html inline script sets document.documentElement.dataset.theme", "Reads key 'pulse-theme'"],
  ["dark mode", "fouc"], ["index.html"], ["index.html"])
O(40, 10, "change", "Design tokens as CSS custom properties", "Colors and spacing in src/styles/tokens.css",
  "Hard-coded hex colors in 60 components were replaced by CSS variables so themes only redefine tokens.",
  ["src/styles/tokens.css --color-bg, --color-fg, --space-2", "[data-theme=dark] overrides"],
  ["theming", "css"], [], ["src/styles/tokens.css"])

O(41, 11, "bugfix", "Memory leak from undisposed ECharts instances", "Heap grew ~30 MB per navigation",
  "Navigating between dashboards kept growing the JS heap; heap snapshots showed detached canvases retained by ECharts. TimeSeriesChart now calls chart.dispose() in the effect cleanup and disconnects its ResizeObserver.",
  ["Heap +30 MB per navigation, 600 MB after 20 switches", "useEffect cleanup: chart.dispose(); observer.disconnect()"],
  ["memory leak", "charts"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/components/charts/TimeSeriesChart.tsx"])
O(42, 11, "bugfix", "Metrics WebSocket stayed open after logout", "Server kept pushing to a logged-out tab",
  "Logging out did not close the socket, so the next user on a shared kiosk briefly saw the previous subscriptions. The auth store's logout now triggers closeLiveConnection().",
  ["src/auth/oidc.ts logout calls closeLiveConnection()", "Socket closed with code 1000"],
  ["websocket", "authentication", "security"], ["src/features/metrics/useLiveMetrics.ts"], ["src/auth/oidc.ts", "src/features/metrics/useLiveMetrics.ts"])
O(43, 11, "change", "Upload source maps to Sentry from CI", "@sentry/vite-plugin",
  "Production stack traces were minified. The Sentry Vite plugin uploads source maps on release builds and deletes them from dist afterwards.",
  ["vite.config.ts sentryVitePlugin({org:'acme', project:'pulse-web'})", "SENTRY_AUTH_TOKEN CI secret", "sourcemap: 'hidden'"],
  ["observability", "sentry", "build"], ["vite.config.ts"], ["vite.config.ts", ".github/workflows/ci.yml"])
O(44, 11, "discovery", "ECharts is 1 MB of the main bundle", "rollup-plugin-visualizer report",
  "The bundle report showed echarts imported as a whole from 'echarts', pulling in maps, 3D and every chart type although only line and bar are used.",
  ["dist/assets/index-*.js 1.9 MB (610 KB gzip)", "echarts accounts for ~1.0 MB"],
  ["bundle size", "charts"], ["vite.config.ts"], [])

O(45, 12, "change", "Tree-shaken ECharts imports cut the bundle from 1.9 MB to 1.1 MB", "echarts/core with explicit components",
  "A src/lib/echarts.ts module registers only LineChart, BarChart, grid, tooltip, legend, dataZoom and the canvas renderer. Main bundle went from 1.9 MB to 1.1 MB (610 KB to 360 KB gzip).",
  ["src/lib/echarts.ts echarts.use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, CanvasRenderer])", "1.9 MB -> 1.1 MB raw"],
  ["bundle size", "performance", "tree shaking"], ["src/components/charts/TimeSeriesChart.tsx"], ["src/lib/echarts.ts", "src/components/charts/TimeSeriesChart.tsx"])
O(46, 12, "decision", "Switched live metrics from WebSocket to Server-Sent Events", "Corporate proxies were killing WebSocket connections",
  "Several customer sites behind Zscaler and Blue Coat proxies never received live points because the upgrade request was dropped. The team moved to SSE: it is plain HTTP, passes through those proxies, and the data only flows server-to-client anyway.",
  ["Backend endpoint GET /stream/metrics (text/event-stream)", "WebSocket code path removed", "Proxies returned 403 or closed on Upgrade"],
  ["live updates", "server-sent events", "websocket"], ["src/features/metrics/useLiveMetrics.ts"], [])
O(47, 12, "feature", "useLiveMetrics rewritten with EventSource", "Resumes with Last-Event-ID",
  "The hook now uses EventSource; the browser reconnects automatically and sends Last-Event-ID so the server replays missed points. The custom reconnect backoff module was deleted.",
  ["src/features/metrics/useLiveMetrics.ts new EventSource('/stream/metrics?series=...')", "Deleted src/lib/reconnect.ts", "Server sends retry: 5000"],
  ["live updates", "server-sent events"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])
O(48, 12, "bugfix", "Only six dashboards could stream at once", "HTTP/1.1 per-origin connection limit",
  "With one EventSource per chart group, the seventh tab hung because browsers allow six connections per origin over HTTP/1.1. All series are now multiplexed into a single stream per tab, and the ingress was switched to HTTP/2.",
  ["One EventSource per tab, series listed in query string", "ingress nginx http2 enabled"],
  ["server-sent events", "connection limits"], ["src/features/metrics/useLiveMetrics.ts"], ["src/features/metrics/useLiveMetrics.ts"])

O(49, 13, "feature", "Internationalisation with react-i18next", "English and German",
  "Strings were extracted into src/locales/{en,de}/common.json and components use the useTranslation hook. Language follows the browser with a manual override.",
  ["i18next 23, react-i18next 14", "src/i18n.ts init with i18next-browser-languagedetector"],
  ["i18n", "localization"], [], ["src/i18n.ts", "src/locales/en/common.json", "src/locales/de/common.json"])
O(50, 13, "bugfix", "Numbers formatted with English separators in German UI", "Hard-coded toFixed()",
  "Metric values showed 1,234.5 in German. Formatting now goes through Intl.NumberFormat with the i18n language, giving 1.234,5.",
  ["src/lib/format.ts formatNumber(value, lang)", "Replaced 23 toFixed() calls"],
  ["i18n", "number formatting"], ["src/lib/format.ts"], ["src/lib/format.ts"])
O(51, 13, "bugfix", "Alerts table crashed when the API returned 204 No Content", "Response body undefined",
  "For an empty service the alerts endpoint returns 204, and apiFetch returned undefined, so AlertsTable crashed with TypeError: Cannot read properties of undefined (reading 'map'). apiFetch now returns null for 204 and the table treats it as an empty list.",
  ["TypeError: Cannot read properties of undefined (reading 'map')", "src/api/client.ts returns null when response.status === 204"],
  ["error handling", "http status"], ["src/features/alerts/AlertsTable.tsx", "src/api/client.ts"], ["src/api/client.ts", "src/features/alerts/AlertsTable.tsx"])
O(52, 13, "change", "API mocked with MSW in component tests", "Replaced ad-hoc vi.mock of the client",
  "Tests used vi.mock on apiFetch, which skipped the 204 handling that just broke. Mock Service Worker now intercepts fetch so tests exercise the real client.",
  ["msw 2.3, src/test/handlers.ts", "setupServer in src/test/setup.ts"],
  ["tests", "mocking"], ["src/test/setup.ts"], ["src/test/handlers.ts", "src/test/setup.ts"])

O(53, 14, "refactor", "Route-level code splitting with React.lazy", "Each feature route is its own chunk",
  "Routes in src/routes.tsx now lazy-load their page components behind Suspense with a skeleton fallback.",
  ["src/routes.tsx const AlertsPage = lazy(() => import('./features/alerts/AlertsPage'))", "6 route chunks"],
  ["code splitting", "refactor"], ["src/routes.tsx"], ["src/routes.tsx"])
O(54, 14, "change", "Initial load LCP improved from 3.1s to 1.6s", "Lighthouse on throttled 4G profile",
  "With route chunks and the slimmer charts bundle, the landing page downloads 420 KB instead of 1.1 MB of JS.",
  ["LCP 3.1s -> 1.6s", "Initial JS 1.1 MB -> 420 KB"],
  ["performance", "web vitals"], [], [])
O(55, 14, "bugfix", "Stale tabs failed to load route chunks after a deploy", "Failed to fetch dynamically imported module",
  "Users with the app open during a deploy got TypeError: Failed to fetch dynamically imported module when navigating, because old hashed chunks were deleted. A lazyWithReload helper reloads the page once when a chunk import fails.",
  ["TypeError: Failed to fetch dynamically imported module: https://pulse.acme.io/assets/AlertsPage-3f9a.js", "src/lib/lazyWithReload.ts uses sessionStorage flag to avoid loops"],
  ["code splitting", "deployment", "error handling"], ["src/routes.tsx"], ["src/lib/lazyWithReload.ts", "src/routes.tsx"])
O(56, 14, "change", "Default React Query staleTime 30s and gcTime 5 min", "Fewer refetches on tab focus",
  "Every window focus refetched all queries. Non-live queries now default to staleTime 30s; live metrics are updated by the stream anyway.",
  ["src/api/queryClient.ts defaultOptions.queries.staleTime = 30_000, gcTime = 300_000", "refetchOnWindowFocus left true"],
  ["react query", "caching"], ["src/api/queryClient.ts"], ["src/api/queryClient.ts"])

Q("paraphrase", "the page with lots of graphs took ages to appear", [17, 18, 20])
Q("paraphrase", "people at customer offices behind a corporate firewall never saw realtime numbers", [46, 47])
Q("paraphrase", "browser tab kept eating more and more RAM as I clicked between boards", [41])
Q("paraphrase", "logging in again after the session expired took several seconds", [27])
Q("file", "what did we change in src/api/client.ts for slow requests", [8])
Q("file", "src/lib/echarts.ts imports", [45])
Q("file", "problems in useUrlFilters.ts", [14, 15])
Q("error", "Maximum update depth exceeded", [15])
Q("error", "Failed to fetch dynamically imported module", [55])
Q("error", "Cannot read properties of undefined (reading 'map')", [51])
Q("error", "[vite] Internal server error: Failed to resolve import \"@/components", [30])
Q("decision", "why zustand and not redux", [9])
Q("decision", "why did we go with echarts over uplot", [18])
Q("keyword", "csv excel umlats", [34])
Q("keyword", "websocket reconnect backoff", [23])
Q("keyword", "token refresh invalid_grant", [28])
Q("temporal", "how does the dashboard receive live metrics now", [46, 47])
Q("temporal", "what is the latest bundle size after the chart library work", [54, 45])

# ---------------------------------------------------------------------------
# 3. stash-cli: Rust CLI for deduplicating directory backups
# ---------------------------------------------------------------------------
project("stash", "/home/dev/stash-cli", "2026-06-16", 14)

O(1, 1, "discovery", "Surveyed the stash CLI crate layout", "clap derive CLI over a content-addressed repository",
  "stash is a single-binary backup tool. src/cli.rs defines subcommands with clap derive, src/repo/ handles packs and the index, and src/chunker.rs splits files into content-defined chunks.",
  ["src/main.rs -> cli::run()", "Subcommands: init, backup, restore, snapshots, check", "Edition 2021, anyhow for errors"],
  ["project structure", "rust", "cli"], ["src/main.rs", "src/cli.rs", "src/repo/mod.rs"], [])
O(2, 1, "discovery", "Chunker uses FastCDC with 1 MiB average chunk size", "min 256 KiB, max 4 MiB",
  "src/chunker.rs wraps the fastcdc crate. The chunk size bounds are hard-coded constants, and chunk ids are SHA-256 digests of the plaintext.",
  ["fastcdc 3.1, AVG_SIZE = 1 << 20", "Chunk id = sha2::Sha256 digest"],
  ["chunking", "deduplication"], ["src/chunker.rs"], [])
O(3, 1, "bugfix", "Snapshot path tests failed on Windows", "Expected forward slashes",
  "tests/snapshot_paths.rs compared stored paths against strings with '/', failing on the Windows CI runner. Stored paths are now normalised to '/' in snapshot metadata and the test builds expectations with Path::join.",
  ["assertion `left == right` failed: left: \"docs\\\\a.txt\" right: \"docs/a.txt\"", "src/snapshot.rs to_unix_path()"],
  ["tests", "windows", "paths"], ["tests/snapshot_paths.rs"], ["src/snapshot.rs", "tests/snapshot_paths.rs"])
O(4, 1, "change", "Added cargo-deny for license and advisory checks", "deny.toml in CI",
  "cargo deny check runs in CI to catch RUSTSEC advisories and copyleft licenses in dependencies.",
  ["deny.toml allow = [MIT, Apache-2.0, BSD-3-Clause, ISC, Unicode-DFS-2016]", "CI job 'deny' runs EmbarkStudios/cargo-deny-action"],
  ["supply chain", "ci"], [], ["deny.toml", ".github/workflows/ci.yml"])

O(5, 2, "bugfix", "Restore panicked on empty files", "unwrap on None chunk list",
  "Restoring a snapshot containing a zero-byte file crashed with thread 'main' panicked at src/restore.rs:88:37: called `Option::unwrap()` on a `None` value. Empty files have no chunks; restore now creates them directly.",
  ["thread 'main' panicked at src/restore.rs:88:37: called `Option::unwrap()` on a `None` value", "src/restore.rs handles entry.chunks.is_empty()"],
  ["panic", "restore", "edge case"], ["src/restore.rs"], ["src/restore.rs", "tests/restore.rs"])
O(6, 2, "feature", "restore --dry-run lists files without writing", "Prints planned actions",
  "Users wanted to preview a restore. --dry-run walks the snapshot tree and prints create/overwrite/skip per path.",
  ["src/cli.rs RestoreArgs { dry_run: bool }", "Output format: '+ path', '~ path', '= path'"],
  ["restore", "cli"], ["src/cli.rs"], ["src/cli.rs", "src/restore.rs"])
O(7, 2, "refactor", "Typed errors with thiserror in src/error.rs", "Library code stops returning anyhow::Error",
  "The repo module returned anyhow errors, so the CLI could not distinguish 'repository locked' from 'corrupt pack'. A StashError enum now covers these cases and anyhow is only used in main.",
  ["src/error.rs enum StashError { Locked, CorruptPack, NotFound, Io(#[from] io::Error), ... }", "thiserror 1.0"],
  ["error handling", "refactor"], ["src/repo/mod.rs"], ["src/error.rs", "src/repo/mod.rs"])
O(8, 2, "change", "Distinct exit codes for scripts", "0 ok, 1 error, 2 usage, 3 repository locked",
  "Cron wrappers needed to tell a locked repository apart from real failures. main maps StashError variants to exit codes.",
  ["src/main.rs std::process::exit(code)", "Documented in README 'Exit codes'"],
  ["cli", "exit codes"], ["src/main.rs"], ["src/main.rs", "README.md"])

O(9, 3, "bugfix", "Fixed borrow checker error when updating the index during backup", "E0502 in Index::add_chunks",
  "A refactor produced error[E0502]: cannot borrow `self.index` as mutable because it is also borrowed as immutable, because an iterator over self.index.entries was alive while inserting. The new ids are now collected into a Vec first and inserted after the loop.",
  ["error[E0502]: cannot borrow `self.index` as mutable because it is also borrowed as immutable", "src/repo/index.rs add_chunks collects missing ids first"],
  ["borrow checker", "compiler error"], ["src/repo/index.rs"], ["src/repo/index.rs"])
O(10, 3, "change", "Parallel chunk hashing with rayon cut a 40 GB backup from 11 to 4 minutes", "par_iter over files",
  "Backups were single-threaded; CPU sat at 100% of one core during hashing. Files are now chunked and hashed in parallel with rayon while the pack writer stays on one thread via a bounded crossbeam channel.",
  ["40 GB home dir: 11m02s -> 3m58s on 8 cores", "crossbeam_channel::bounded(64) to the pack writer", "rayon 1.10"],
  ["performance", "parallelism", "hashing"], ["src/backup.rs"], ["src/backup.rs", "Cargo.toml"])
O(11, 3, "discovery", "The index is one JSON file rewritten on every backup", "index.json reaches 180 MB",
  "Each backup deserialises and rewrites the whole index.json, which takes 9 seconds on a large repository and risks corruption if interrupted.",
  ["repo/index.json 180 MB for 1.2M chunks", "serde_json::to_writer on every backup"],
  ["index", "storage format"], ["src/repo/index.rs"], [])
O(12, 3, "decision", "Chose SQLite (rusqlite) for the chunk index over sled", "Inspectable, transactional, mature",
  "Options were sled, redb and SQLite. SQLite won because it is transactional, the index can be inspected with the sqlite3 shell when debugging user repos, and sled's 1.0 has been in limbo for years; redb was a close second.",
  ["rusqlite 0.31 chosen", "sled rejected: unstable on-disk format", "redb rejected mainly for lack of ad hoc query tooling"],
  ["index", "library choice", "sqlite"], ["src/repo/index.rs"], [])

O(13, 4, "feature", "Chunk index stored in SQLite", "Tables chunks(id, pack, offset, len) and packs",
  "The index moved to repo/index.sqlite with incremental inserts inside one transaction per backup.",
  ["CREATE TABLE chunks (id BLOB PRIMARY KEY, pack_id INTEGER, offset INTEGER, len INTEGER)", "src/repo/index.rs Index::open(path)"],
  ["index", "sqlite"], [], ["src/repo/index.rs", "src/repo/schema.sql"])
O(14, 4, "change", "rusqlite built with the bundled feature", "No system libsqlite3 needed",
  "Linking against system SQLite failed on Alpine and old CentOS boxes; the bundled feature compiles SQLite in.",
  ["Cargo.toml rusqlite = { version = \"0.31\", features = [\"bundled\"] }"],
  ["build", "sqlite"], ["Cargo.toml"], ["Cargo.toml"])
O(15, 4, "bugfix", "Concurrent stash runs failed with 'database is locked'", "SQLITE_BUSY from a second process",
  "A cron backup overlapping with a manual prune failed with Error: SqliteFailure(Error { code: DatabaseBusy, .. }, Some(\"database is locked\")). The connection now sets busy_timeout to 5s, and mutating commands take a repository lock first.",
  ["Some(\"database is locked\")", "conn.busy_timeout(Duration::from_secs(5))"],
  ["sqlite", "concurrency", "locking"], ["src/repo/index.rs"], ["src/repo/index.rs"])
O(16, 4, "feature", "Repository lock file with PID and hostname", "repo/locks/exclusive",
  "backup, prune and migrate create an exclusive lock file containing pid, hostname and start time; stale locks from dead local processes are removed automatically, others need `stash unlock`.",
  ["src/repo/lock.rs RepoLock::acquire()", "Stale if same host and pid not alive (kill(pid, 0))", "Exit code 3 when locked"],
  ["locking", "concurrency"], [], ["src/repo/lock.rs", "src/cli.rs"])

O(17, 5, "decision", "Switched chunk ids from SHA-256 to BLAKE3", "3.4x faster hashing, same 256-bit ids",
  "After parallelising, hashing was still the top item in the flame graph. BLAKE3 hashed 3.4x faster than sha2 on the benchmark machine and is also parallel internally, so the team accepted a repository format bump to use it.",
  ["criterion bench: sha2 1.1 GB/s vs blake3 3.8 GB/s", "Id length unchanged (32 bytes)", "Requires repo format v2"],
  ["hashing", "performance", "library choice"], ["src/chunker.rs", "benches/hash.rs"], [])
O(18, 5, "feature", "stash migrate upgrades repositories from format v1 to v2", "Re-hashes chunks with BLAKE3",
  "The migrate subcommand reads every pack, recomputes chunk ids with BLAKE3 and rewrites the index and snapshots. config.json gets version: 2.",
  ["src/migrate.rs migrate_v1_to_v2()", "repo/config.json {\"version\": 2}", "Older binaries refuse v2 repos with a clear message"],
  ["migration", "storage format"], [], ["src/migrate.rs", "src/cli.rs", "src/repo/config.rs"])
O(19, 5, "bugfix", "Interrupted migrate left the repository without an index", "Index was rewritten in place",
  "Killing stash migrate halfway left index.sqlite half-converted. Migration now writes index.sqlite.v2.tmp and snapshots into a staging dir, fsyncs, and renames atomically at the end.",
  ["src/migrate.rs writes to *.tmp then std::fs::rename", "fsync on the directory after rename"],
  ["migration", "atomicity", "crash safety"], ["src/migrate.rs"], ["src/migrate.rs"])
O(20, 5, "change", "Property test that chunking round-trips any input", "proptest",
  "A proptest generates random byte vectors up to 8 MiB and checks that concatenated chunks equal the input and that boundaries are stable under prefix changes.",
  ["tests/chunker_prop.rs", "proptest 1.4, 256 cases"],
  ["tests", "property testing", "chunking"], [], ["tests/chunker_prop.rs"])

O(21, 6, "feature", "Config files can be YAML as well as TOML", "Requested by users with Ansible setups",
  "Config loading now dispatches on extension: .toml via toml, .yaml/.yml via serde_yaml into the same Config struct.",
  ["src/config.rs load() matches on extension", "serde_yaml 0.9 added"],
  ["configuration", "yaml", "toml"], ["src/config.rs"], ["src/config.rs", "Cargo.toml"])
O(22, 6, "bugfix", "Tilde in config paths was not expanded", "repository = \"~/backups\" created a literal ~ directory",
  "Users ended up with a directory literally named '~' in their working dir. Paths in the config go through shellexpand::tilde before use.",
  ["shellexpand 3.1", "src/config.rs expand_paths()"],
  ["configuration", "paths"], ["src/config.rs"], ["src/config.rs"])
O(23, 6, "discovery", "Config lookup order", "--config, STASH_CONFIG, XDG config dir",
  "The loader checks --config first, then $STASH_CONFIG, then $XDG_CONFIG_HOME/stash/config.toml (falling back to ~/.config). On macOS dirs::config_dir points to ~/Library/Application Support, which surprised users.",
  ["src/config.rs find_config()", "macOS: ~/Library/Application Support/stash/config.toml"],
  ["configuration", "xdg"], ["src/config.rs"], [])
O(24, 6, "change", "MSRV raised from 1.70 to 1.74", "Required by clap 4.5",
  "clap 4.5 needs Rust 1.74, so rust-version in Cargo.toml moved to 1.74 and the MSRV CI job was updated.",
  ["Cargo.toml rust-version = \"1.74\"", "CI matrix includes 1.74 and stable"],
  ["msrv", "rust version"], ["Cargo.toml"], ["Cargo.toml", ".github/workflows/ci.yml"])

O(25, 7, "feature", "S3-compatible remote backend via object_store", "stash init s3://bucket/prefix",
  "Repositories can live on S3, MinIO or R2. The backend trait got async put/get/list and an ObjectStoreBackend implementation.",
  ["object_store 0.10 with aws feature", "src/backend/s3.rs", "Credentials from the standard AWS env vars"],
  ["s3", "remote storage", "async"], ["src/backend/mod.rs"], ["src/backend/s3.rs", "src/backend/mod.rs"])
O(26, 7, "bugfix", "Pack uploads failed with 503 SlowDown", "Now retried with exponential backoff",
  "Large backups to S3 failed midway with HTTP 503 SlowDown: Please reduce your request rate. Uploads are retried up to 8 times with exponential backoff starting at 200ms and capped at 20s.",
  ["503 SlowDown: Please reduce your request rate", "RetryConfig { max_retries: 8, backoff: 200ms..20s }"],
  ["retry", "backoff", "s3"], ["src/backend/s3.rs"], ["src/backend/s3.rs"])
O(27, 7, "change", "HTTP timeouts for the S3 backend", "60s request, 10s connect",
  "A stalled TCP connection to MinIO froze a backup for hours. Client options now set a 60s request timeout and 10s connect timeout.",
  ["ClientOptions::with_timeout(60s).with_connect_timeout(10s)", "Configurable as [remote] timeout_secs"],
  ["timeout", "s3", "http client"], ["src/backend/s3.rs"], ["src/backend/s3.rs", "src/config.rs"])
O(28, 7, "bugfix", "Panic: Cannot start a runtime from within a runtime", "block_on called inside async code",
  "The sync Backend wrapper called Runtime::block_on, which panicked when invoked from an async context: Cannot start a runtime from within a runtime. This happens because a function (like `block_on`) attempted to block the current thread while the thread is being used to drive asynchronous tasks. The whole backup pipeline is now async and the wrapper was deleted.",
  ["Cannot start a runtime from within a runtime", "Removed src/backend/blocking.rs", "main uses #[tokio::main]"],
  ["tokio", "async", "panic"], ["src/backend/blocking.rs"], ["src/main.rs", "src/backup.rs"])

O(29, 8, "change", "Upload concurrency 4 -> 16 raised S3 throughput to 140 MB/s", "buffer_unordered(16)",
  "Uploads were latency-bound. Raising concurrent pack uploads from 4 to 16 increased throughput from 38 MB/s to 140 MB/s on a 1 Gbit link without more SlowDown errors.",
  ["src/backup.rs stream::iter(packs).buffer_unordered(cfg.upload_concurrency)", "Default upload_concurrency = 16"],
  ["performance", "concurrency", "s3"], ["src/backup.rs"], ["src/backup.rs", "src/config.rs"])
O(30, 8, "bugfix", "Progress bar garbage in cron logs", "indicatif drew to a non-terminal",
  "Cron mail contained hundreds of carriage-return progress lines. Progress bars are now hidden when stderr is not a terminal (std::io::IsTerminal).",
  ["ProgressBar::with_draw_target(ProgressDrawTarget::hidden()) if !stderr().is_terminal()"],
  ["cli", "progress bar", "logging"], ["src/progress.rs"], ["src/progress.rs"])
O(31, 8, "change", "Structured logging with tracing and --log-format json", "Replaces env_logger",
  "tracing-subscriber with an EnvFilter reads STASH_LOG; --log-format json emits one JSON object per line for log shippers.",
  ["tracing 0.1, tracing-subscriber 0.3 with json feature", "STASH_LOG=stash=debug"],
  ["logging", "observability"], ["src/main.rs"], ["src/main.rs", "Cargo.toml"])
O(32, 8, "bugfix", "Ctrl-C during backup left a partial snapshot", "No signal handling",
  "Interrupting a backup left a snapshot file pointing at packs that were never uploaded. A tokio::signal::ctrl_c handler now cancels the pipeline via a CancellationToken and the snapshot is only written after all packs are flushed.",
  ["tokio_util::sync::CancellationToken", "Snapshot written last, after pack flush"],
  ["signals", "crash safety"], ["src/backup.rs"], ["src/backup.rs"])

O(33, 9, "feature", "stash prune with retention policy", "--keep-daily, --keep-weekly, --keep-monthly",
  "prune selects snapshots to keep per retention rules, deletes the rest, then removes packs no longer referenced.",
  ["src/prune.rs apply_policy()", "stash prune --keep-daily 7 --keep-weekly 4 --keep-monthly 12"],
  ["retention", "prune"], [], ["src/prune.rs", "src/cli.rs"])
O(34, 9, "bugfix", "Prune deleted chunks still needed by a running backup", "Race between prune and backup",
  "A backup running on another machine referenced existing chunks that prune considered unused and deleted, producing snapshots with missing data. Prune now takes the exclusive lock and backups take a shared lock, so they cannot overlap.",
  ["src/repo/lock.rs adds shared locks", "stash check found 37 missing chunks in the affected snapshot"],
  ["prune", "race condition", "locking", "data loss"], ["src/prune.rs", "src/repo/lock.rs"], ["src/repo/lock.rs", "src/prune.rs"])
O(35, 9, "change", "Integration tests with assert_cmd and tempfile", "End-to-end backup/restore",
  "tests/cli.rs runs the built binary against temp directories: init, backup, modify files, backup, restore and diff.",
  ["assert_cmd 2.0, predicates 3, tempfile 3", "tests/cli.rs backup_restore_roundtrip"],
  ["tests", "integration tests"], [], ["tests/cli.rs"])
O(36, 9, "bugfix", "Integration test failed on macOS because of /private/var", "Temp dir path is a symlink",
  "On macOS tempdir() returns /var/folders/... while the snapshot stored the canonical /private/var/folders/..., so the path comparison failed. The test canonicalizes the temp dir first.",
  ["tests/cli.rs uses dir.path().canonicalize()"],
  ["tests", "macos", "paths"], ["tests/cli.rs"], ["tests/cli.rs"])

O(37, 10, "feature", "Client-side encryption of chunks", "XChaCha20-Poly1305 with a key derived by Argon2id",
  "All pack contents are encrypted before upload. The master key is random and stored wrapped by a passphrase-derived key in repo/keys/.",
  ["chacha20poly1305 0.10 XChaCha20Poly1305", "argon2 0.5", "src/crypto.rs seal()/open()"],
  ["encryption", "security"], [], ["src/crypto.rs", "src/repo/keys.rs"])
O(38, 10, "decision", "Argon2id parameters m=64 MiB, t=3, p=1", "Balance between unlock time and brute-force cost",
  "Claude measured unlock time on a Raspberry Pi 4 and a laptop. 64 MiB/3 passes takes 0.9s on the Pi, acceptable for a CLI, while the OWASP-suggested 19 MiB felt too low for offline attacks on the key file.",
  ["Params::new(65536, 3, 1, Some(32))", "Pi 4: 0.9s, laptop: 0.18s", "Params stored in the key file for future changes"],
  ["encryption", "key derivation", "security"], ["src/repo/keys.rs"], [])
O(39, 10, "bugfix", "Decryption failed after enabling compression", "Chunk length recorded before compression",
  "Restores failed with error: failed to decrypt chunk 7f3a91c2: aead::Error because the index stored the plaintext length while the pack held compressed+encrypted bytes, so reads were cut short. The index now stores the on-disk length.",
  ["error: failed to decrypt chunk 7f3a91c2: aead::Error", "chunks.len now stores stored_len; new column raw_len"],
  ["encryption", "compression", "storage format"], ["src/repo/pack.rs", "src/repo/index.rs"], ["src/repo/index.rs", "src/repo/pack.rs"])
O(40, 10, "change", "zstd compression level 3 before encryption", "Repo size -41% on source trees",
  "Chunks are compressed with zstd level 3 before sealing; incompressible chunks (ratio > 0.97) are stored raw with a flag.",
  ["zstd 0.13, level 3", "Test repo 12.4 GB -> 7.3 GB"],
  ["compression", "storage"], [], ["src/repo/pack.rs", "Cargo.toml"])

O(41, 11, "feature", "Shell completions via clap_complete", "stash completions <shell>",
  "A hidden-from-help subcommand prints completion scripts for bash, zsh, fish and PowerShell.",
  ["clap_complete 4.5", "stash completions zsh > ~/.zfunc/_stash"],
  ["cli", "shell completions"], ["src/cli.rs"], ["src/cli.rs"])
O(42, 11, "bugfix", "Cross-compiling to musl failed on openssl-sys", "Switched reqwest/object_store to rustls",
  "The aarch64-unknown-linux-musl release build failed with Could not find directory of OpenSSL installation, and this `-sys` crate cannot proceed without this knowledge. HTTP now uses rustls with webpki roots so there is no OpenSSL dependency.",
  ["error: failed to run custom build command for `openssl-sys v0.9.102`", "Could not find directory of OpenSSL installation", "reqwest default-features = false, features = [\"rustls-tls\"]"],
  ["cross compilation", "tls", "build"], ["Cargo.toml"], ["Cargo.toml"])
O(43, 11, "change", "Release builds via cargo-dist", "GitHub Releases for 5 targets",
  "cargo dist init generated the release workflow producing archives and a shell installer for x86_64/aarch64 Linux (musl), macOS and Windows.",
  [".github/workflows/release.yml generated by cargo-dist 0.19", "dist-workspace.toml targets list"],
  ["release", "ci"], [], [".github/workflows/release.yml", "Cargo.toml"])
O(44, 11, "discovery", "Release binary is 14 MB", "cargo bloat shows object_store and tokio dominate",
  "Users on small VPSes complained about the download. cargo bloat --release --crates attributes most size to object_store, aws-related code, tokio and regex.",
  ["target/release/stash 14.1 MB", "cargo bloat top crates: object_store 2.1 MB, std 1.6 MB, tokio 1.1 MB"],
  ["binary size"], ["Cargo.toml"], [])

O(45, 12, "decision", "Dropped YAML config support; TOML only", "serde_yaml is unmaintained and two formats doubled the docs",
  "serde_yaml was marked unmaintained and archived, and every config option needed examples and tests in both formats. The team decided to support TOML only and give YAML users a one-off converter, reversing the YAML addition from earlier.",
  ["serde_yaml removed from Cargo.toml", "RUSTSEC advisory flagged serde_yaml as unmaintained in cargo-deny", "YAML config now produces an error pointing at `stash config convert`"],
  ["configuration", "yaml", "toml", "dependencies"], ["src/config.rs", "deny.toml"], ["src/config.rs", "Cargo.toml"])
O(46, 12, "feature", "stash config convert turns a YAML config into TOML", "One-off migration helper",
  "The converter is behind a small vendored YAML parser feature flag so the main build does not need serde_yaml; it writes config.toml next to the old file.",
  ["stash config convert ~/.config/stash/config.yaml", "Cargo feature 'yaml-convert', off by default"],
  ["configuration", "migration"], [], ["src/config_convert.rs", "src/cli.rs"])
O(47, 12, "change", "Release binary shrunk from 14 MB to 6.2 MB", "LTO, strip, codegen-units = 1",
  "The release profile now enables fat LTO, strips symbols, uses codegen-units = 1 and panic = abort. Build time rose from 1m10s to 2m40s, acceptable for releases only.",
  ["[profile.release] lto = \"fat\", strip = true, codegen-units = 1, panic = \"abort\"", "14.1 MB -> 6.2 MB"],
  ["binary size", "build"], ["Cargo.toml"], ["Cargo.toml"])
O(48, 12, "change", "MSRV raised to 1.80", "Replace once_cell with std::sync::LazyLock",
  "LazyLock stabilised in 1.80, letting the crate drop once_cell. rust-version is now 1.80.",
  ["Cargo.toml rust-version = \"1.80\"", "once_cell removed"],
  ["msrv", "rust version", "dependencies"], ["Cargo.toml"], ["Cargo.toml", "src/config.rs"])

O(49, 13, "bugfix", "Restoring symlinks on Windows failed without admin rights", "os error 1314",
  "restore aborted with Error: A required privilege is not held by the client. (os error 1314) when creating symlinks on Windows without Developer Mode. Restore now warns and copies the link target instead, unless --strict-symlinks is set.",
  ["A required privilege is not held by the client. (os error 1314)", "src/restore.rs fallback for symlink_file failure"],
  ["windows", "symlinks", "restore"], ["src/restore.rs"], ["src/restore.rs"])
O(50, 13, "feature", "restore --include/--exclude glob filters", "globset",
  "Users can restore a subset with patterns like --include 'Documents/**/*.pdf'.",
  ["globset 0.4", "src/restore.rs Filter::matches(path)"],
  ["restore", "glob"], [], ["src/restore.rs", "src/cli.rs"])
O(51, 13, "bugfix", "Files with accents showed as changed on every backup from macOS", "NFD vs NFC filenames",
  "A repo shared between Linux and macOS reported 'modified' for every file with accents because APFS returns NFD-decomposed names while Linux stored NFC. Paths are normalised to NFC before comparing and storing.",
  ["unicode-normalization 0.1", "src/snapshot.rs normalize_name()"],
  ["unicode", "macos", "paths"], ["src/snapshot.rs"], ["src/snapshot.rs"])
O(52, 13, "refactor", "Split src/repo/mod.rs into pack, index and snapshot modules", "mod.rs was 1,900 lines",
  "The repo module is now src/repo/{pack.rs, index.rs, snapshot_store.rs, lock.rs, keys.rs} with a thin Repository facade.",
  ["src/repo/mod.rs now ~200 lines"],
  ["refactor", "modules"], ["src/repo/mod.rs"], ["src/repo/mod.rs", "src/repo/pack.rs", "src/repo/snapshot_store.rs"])

O(53, 14, "bugfix", "Upload retries failed because the request body had been consumed", "Retry re-sent an empty stream",
  "After a transient error, retried PUTs failed with 400 IncompleteBody because the pack was passed as a one-shot stream. Packs are now buffered as bytes::Bytes, which is cheap to clone for each attempt.",
  ["400 IncompleteBody: You did not provide the number of bytes specified by the Content-Length HTTP header", "Pack size max 16 MiB so buffering is fine"],
  ["retry", "s3", "http"], ["src/backend/s3.rs"], ["src/backend/s3.rs"])
O(54, 14, "change", "SQLite index switched to WAL mode", "Index update 9s -> 1.2s",
  "PRAGMA journal_mode=WAL and synchronous=NORMAL cut the end-of-backup index commit from 9s to 1.2s on large repos.",
  ["PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", "index.sqlite-wal must be included when copying repos"],
  ["sqlite", "performance"], ["src/repo/index.rs"], ["src/repo/index.rs"])
O(55, 14, "change", "Routine dependency update", "tokio 1.40, clap 4.5.17, object_store 0.11",
  "cargo update plus a bump of object_store to 0.11, which renamed the retry config fields.",
  ["tokio 1.38 -> 1.40", "object_store 0.10 -> 0.11: RetryConfig.backoff field changed"],
  ["dependency upgrade"], ["Cargo.toml"], ["Cargo.toml", "Cargo.lock", "src/backend/s3.rs"])
O(56, 14, "discovery", "stash check --read-data takes about 2 hours for 200 GB", "Bound by download and decrypt",
  "A full verification downloads and decrypts every pack. Users should use --read-data-subset 1/10 in cron and run a full check monthly.",
  ["200 GB repo on R2: 1h58m", "--read-data-subset n/m checks a deterministic slice"],
  ["verification", "performance"], ["src/check.rs"], [])

Q("paraphrase", "use more CPU cores when fingerprinting files so backups finish sooner", [10])
Q("paraphrase", "two copies of the tool running at the same time clash over the catalog database", [15, 16])
Q("paraphrase", "cleaning up old backups threw away data that another backup still needed", [34])
Q("paraphrase", "downloaded executable is too big", [44, 47])
Q("file", "src/error.rs enum", [7])
Q("file", "what changed in src/migrate.rs", [18, 19])
Q("error", "Cannot start a runtime from within a runtime", [28])
Q("error", "cannot borrow `self.index` as mutable because it is also borrowed as immutable", [9])
Q("error", "Could not find directory of OpenSSL installation", [42])
Q("error", "os error 1314", [49])
Q("decision", "why blake3", [17])
Q("decision", "why did we pick sqlite for the chunk index instead of sled", [12])
Q("keyword", "503 slowdown backoff", [26])
Q("keyword", "argon2 params", [38])
Q("keyword", "prune keep-daily", [33])
Q("temporal", "which config file formats does stash support now", [45, 21])
Q("temporal", "what is the current minimum supported rust version", [48])

# ---------------------------------------------------------------------------
# 4. courier-router: Go 1.21+ gRPC service on Kubernetes (Helm, Kafka, pgx)
# ---------------------------------------------------------------------------
project("router", "/home/dev/courier-router", "2026-06-23", 14)

O(1, 1, "discovery", "Mapped the courier-router service layout", "gRPC service with grpc-gateway REST facade",
  "The service picks carriers and routes for shipments. cmd/router/main.go wires config, the pgx pool and the gRPC server; business logic is in internal/routing and carrier integrations in internal/carriers.",
  ["api/proto/router/v1/router.proto defines RouterService", "internal/store uses pgx v5 pgxpool", "grpc-gateway v2 serves /v1/* REST"],
  ["project structure", "go", "grpc"], ["cmd/router/main.go", "internal/routing/service.go", "api/proto/router/v1/router.proto"], [])
O(2, 1, "discovery", "Helm chart deploys 3 replicas behind an internal ingress", "deploy/helm/router",
  "The chart has deployment, service, ingress and configmap templates. values-prod.yaml sets replicaCount 3 and no resource requests.",
  ["deploy/helm/router/values-prod.yaml replicaCount: 3", "No resources.requests set", "Ingress class nginx-internal"],
  ["kubernetes", "helm"], ["deploy/helm/router/templates/deployment.yaml", "deploy/helm/router/values-prod.yaml"], [])
O(3, 1, "bugfix", "go vet copylocks warning on RateTable", "Struct with sync.Mutex passed by value",
  "go vet reported internal/routing/rates.go:42:9: Lookup passes lock by value: routing.RateTable contains sync.RWMutex. The methods now use pointer receivers.",
  ["rates.go:42:9: Lookup passes lock by value: routing.RateTable contains sync.RWMutex", "func (t *RateTable) Lookup(...)"],
  ["go vet", "mutex", "static analysis"], ["internal/routing/rates.go"], ["internal/routing/rates.go"])
O(4, 1, "change", "Added golangci-lint configuration", "errcheck, govet, staticcheck, revive",
  "Lint ran with defaults locally and not at all in CI. .golangci.yml enables a fixed linter set and CI runs golangci-lint v1.59.",
  [".golangci.yml linters: errcheck, govet, staticcheck, revive, gosec", "timeout: 5m"],
  ["linting", "ci"], [], [".golangci.yml", ".github/workflows/ci.yml"])

O(5, 2, "bugfix", "Pods in CrashLoopBackOff when the database was slow", "Liveness probe checked Postgres",
  "During a slow RDS failover every pod was restarted repeatedly because /healthz pinged the database and the liveness probe failed after 1s. Liveness now only checks the process (/livez) while readiness (/readyz) includes the DB ping.",
  ["kubectl get pods: router-7c9f... 0/1 CrashLoopBackOff", "Liveness: GET /livez (no dependencies)", "Readiness: GET /readyz pings DB with 500ms timeout"],
  ["kubernetes", "health checks", "probes"], ["internal/health/health.go", "deploy/helm/router/templates/deployment.yaml"], ["internal/health/health.go", "deploy/helm/router/templates/deployment.yaml"])
O(6, 2, "change", "Readiness probe timeoutSeconds 1 -> 3", "failureThreshold 3, periodSeconds 5",
  "Readiness flapped under GC pauses with the 1s default timeout. Probe timing is now in values.yaml.",
  ["values.yaml probes.readiness.timeoutSeconds: 3", "failureThreshold: 3, periodSeconds: 5"],
  ["kubernetes", "probes", "timeout"], [], ["deploy/helm/router/values.yaml", "deploy/helm/router/templates/deployment.yaml"])
O(7, 2, "discovery", "No graceful shutdown: in-flight requests dropped on deploy", "SIGTERM exits immediately",
  "main.go never handled SIGTERM, so rolling updates cut in-flight gRPC calls and clients saw UNAVAILABLE bursts during each deploy.",
  ["Clients log: rpc error: code = Unavailable desc = transport is closing", "Seen on every rollout"],
  ["graceful shutdown", "deployment"], ["cmd/router/main.go"], [])
O(8, 2, "feature", "Graceful shutdown with preStop delay", "GracefulStop within 25s, terminationGracePeriodSeconds 30",
  "On SIGTERM the server marks itself not ready, waits for endpoints to update (preStop sleep 5), then calls grpcServer.GracefulStop and http.Server.Shutdown with a 25s deadline.",
  ["signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)", "preStop: exec sleep 5", "terminationGracePeriodSeconds: 30"],
  ["graceful shutdown", "kubernetes"], ["cmd/router/main.go"], ["cmd/router/main.go", "deploy/helm/router/templates/deployment.yaml"])

O(9, 3, "bugfix", "Panic loading carrier rate tables", "assignment to entry in nil map",
  "Startup panicked with panic: assignment to entry in nil map at internal/routing/rates.go:88 when a carrier had no zones yet. The zones map is now initialised in NewRateTable.",
  ["panic: assignment to entry in nil map", "goroutine 1 [running]: internal/routing.(*RateTable).Load rates.go:88"],
  ["panic", "maps", "initialization"], ["internal/routing/rates.go"], ["internal/routing/rates.go"])
O(10, 3, "feature", "In-memory carrier quote cache with 60s TTL", "Avoids repeated quote calls for the same lane",
  "Quotes for the same origin/destination/weight bucket are cached for 60 seconds, cutting carrier API calls by ~70% during peak.",
  ["internal/carriers/cache.go QuoteCache with TTL 60s", "Key: carrier|origin|dest|weightBucket"],
  ["caching", "carriers"], [], ["internal/carriers/cache.go"])
O(11, 3, "bugfix", "Data race in the quote cache", "Found by go test -race",
  "go test -race ./... printed WARNING: DATA RACE: write at 0x00c000182030 by goroutine 41 ... internal/carriers.(*QuoteCache).Set. The eviction loop touched the map without the mutex; both now hold c.mu.",
  ["WARNING: DATA RACE ... (*QuoteCache).Set cache.go:57", "Eviction goroutine now locks c.mu"],
  ["data race", "concurrency", "tests"], ["internal/carriers/cache.go"], ["internal/carriers/cache.go"])
O(12, 3, "change", "CI runs tests with -race", "go test -race -count=1 ./...",
  "The race detector only ran on laptops. CI now runs the full suite with -race, adding about 40s.",
  [".github/workflows/ci.yml: go test -race -count=1 ./...", "CGO_ENABLED=1 required for -race"],
  ["ci", "data race", "tests"], [], [".github/workflows/ci.yml"])

O(13, 4, "bugfix", "Postgres refused connections: too many clients", "pgxpool defaults multiplied by replicas",
  "During a traffic spike the service logged failed to connect to `host=router-db user=router database=router`: server error (FATAL: sorry, too many clients already (SQLSTATE 53300)). Each pod opened up to 32 connections against max_connections=100.",
  ["FATAL: sorry, too many clients already (SQLSTATE 53300)", "RDS db.t4g.large max_connections = 100", "Temporary fix: pool_max_conns=10 in DATABASE_URL"],
  ["database", "connection pool", "postgres"], ["internal/store/pool.go"], ["internal/store/pool.go"])
O(14, 4, "discovery", "pgxpool default MaxConns is max(4, runtime.NumCPU())", "32 on the 32-core nodes",
  "pgx v5 derives the default pool size from NumCPU, which inside containers sees the node's cores, not the CPU limit. On the new 32-core node group each pod could open 32 connections.",
  ["pgxpool.Config.MaxConns default = max(4, runtime.NumCPU())", "GOMAXPROCS also saw 32 cores"],
  ["connection pool", "containers", "cpu limits"], ["internal/store/pool.go"], [])
O(15, 4, "decision", "Cap the pool at 10 per pod instead of adding PgBouncer", "Fewer moving parts for now",
  "Claude proposed PgBouncer but the team decided to cap pgxpool at 10 connections per pod, since 3-10 replicas x 10 stays under the limit and PgBouncer's transaction mode would break pgx's prepared statement cache.",
  ["MaxConns = 10, MinConns = 2", "PgBouncer rejected: transaction pooling conflicts with pgx statement cache", "Revisit if replicas exceed 10"],
  ["connection pool", "architecture", "pgbouncer"], ["internal/store/pool.go"], ["internal/store/pool.go"])
O(16, 4, "change", "statement_timeout 5s on all router DB sessions", "Set via pgx RuntimeParams",
  "A runaway route query once held locks for minutes. Every connection now sets statement_timeout=5000 and idle_in_transaction_session_timeout=10000.",
  ["cfg.ConnConfig.RuntimeParams[\"statement_timeout\"] = \"5000\"", "idle_in_transaction_session_timeout = 10000"],
  ["timeout", "postgres"], ["internal/store/pool.go"], ["internal/store/pool.go"])

O(17, 5, "feature", "gRPC client to carrier-api with retry service config", "Retries UNAVAILABLE up to 4 attempts",
  "The carrier-api client now uses a gRPC service config retry policy: maxAttempts 4, initialBackoff 0.2s, maxBackoff 2s, retryableStatusCodes [UNAVAILABLE].",
  ["internal/carriers/client.go grpc.WithDefaultServiceConfig(retryPolicyJSON)", "retryableStatusCodes: [\"UNAVAILABLE\"]"],
  ["retry", "grpc", "carriers"], [], ["internal/carriers/client.go"])
O(18, 5, "bugfix", "Duplicate shipments booked at the carrier", "CreateShipment retried after a timeout that actually succeeded",
  "Some shipments were booked twice at FastFreight: our 2s deadline expired (DEADLINE_EXCEEDED) while the carrier completed the booking, and the caller retried. CreateShipment is now excluded from automatic retries and carries a request_id the carrier uses for deduplication.",
  ["rpc error: code = DeadlineExceeded desc = context deadline exceeded", "Service config retry now only applies to GetQuote and TrackShipment", "request_id = shipment UUID"],
  ["retry", "idempotency", "grpc"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "internal/carriers/fastfreight.go"])
O(19, 5, "change", "Per-method deadlines for carrier calls", "GetQuote 800ms, CreateShipment 5s",
  "A single 2s default fit neither method. Quotes use 800ms so the fan-out stays fast; bookings get 5s.",
  ["internal/carriers/client.go quoteTimeout = 800ms, createTimeout = 5s", "Configurable via CARRIER_CREATE_TIMEOUT"],
  ["timeout", "grpc", "carriers"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "internal/config/config.go"])
O(20, 5, "discovery", "carrier-api CreateShipment p99 is 1.9s", "From their Grafana dashboard",
  "FastFreight's booking path is slow at p99 1.9s, p999 4.2s, which explains the timeouts with the old 2s deadline.",
  ["p50 340ms, p99 1.9s, p999 4.2s"],
  ["latency", "carriers"], [], [])

O(21, 6, "change", "Route optimisation p99 from 1.2s to 310ms", "Precomputed zone graph, fewer allocations",
  "pprof showed Dijkstra rebuilding the zone adjacency map on every request. The graph is now built once when rate tables load and shortest paths use a preallocated heap.",
  ["go tool pprof cpu.prof: 61% in buildAdjacency", "internal/routing/graph.go ZoneGraph built at load", "p99 1.2s -> 310ms"],
  ["performance", "profiling", "algorithms"], ["internal/routing/graph.go", "internal/routing/optimize.go"], ["internal/routing/graph.go", "internal/routing/optimize.go"])
O(22, 6, "change", "sync.Pool for label rendering buffers", "Allocations per request 1.8 MB -> 220 KB",
  "Label PDFs allocated fresh bytes.Buffers; pooling them reduced GC cycles from 40/s to 9/s under load.",
  ["internal/labels/render.go bufPool sync.Pool", "GC cycles 40/s -> 9/s"],
  ["performance", "garbage collection"], ["internal/labels/render.go"], ["internal/labels/render.go"])
O(23, 6, "change", "GOMEMLIMIT derived from the container memory limit", "automemlimit at 90%",
  "The Go runtime did not know about the cgroup limit, so heap could overshoot before GC kicked in. KimMachineGun/automemlimit sets GOMEMLIMIT to 90% of the limit and go.uber.org/automaxprocs fixes GOMAXPROCS.",
  ["import _ \"github.com/KimMachineGun/automemlimit\"", "import _ \"go.uber.org/automaxprocs\""],
  ["memory", "containers", "garbage collection"], ["cmd/router/main.go"], ["cmd/router/main.go", "go.mod"])
O(24, 6, "bugfix", "Pods OOMKilled during bulk shipment import", "512Mi limit too small",
  "The nightly CSV import of 200k shipments pushed pods past 512Mi and they were OOMKilled (exit code 137). Memory limit raised to 768Mi and the import now streams rows instead of loading the file.",
  ["Last State: Terminated, Reason: OOMKilled, Exit Code: 137", "resources.limits.memory: 768Mi", "internal/imports/csv.go uses csv.Reader streaming"],
  ["memory", "kubernetes", "oom"], ["internal/imports/csv.go"], ["internal/imports/csv.go", "deploy/helm/router/values-prod.yaml"])

O(25, 7, "feature", "Kafka consumer for shipment.events using franz-go", "Updates routing state on carrier status changes",
  "A consumer group 'router-events' reads shipment.events and updates shipment status and ETA.",
  ["github.com/twmb/franz-go v1.17", "internal/events/consumer.go", "Topic has 12 partitions"],
  ["kafka", "event consumer"], [], ["internal/events/consumer.go", "cmd/router/main.go"])
O(26, 7, "bugfix", "Consumer group kept rebalancing", "Handler blocked on retries longer than the session timeout",
  "When the ETA service was down, the handler retried inline for minutes, the member missed heartbeats/poll deadlines and the group rebalanced continuously (REBALANCE_IN_PROGRESS). Processing no longer blocks on retries.",
  ["franz-go log: heartbeat errored, err: REBALANCE_IN_PROGRESS", "Inline retry loop removed from handler"],
  ["kafka", "rebalance", "retry"], ["internal/events/consumer.go"], ["internal/events/consumer.go"])
O(27, 7, "decision", "Failed events go to retry topics and a DLQ instead of blocking retries", "shipment.events.retry -> shipment.events.dlq",
  "The team chose a retry topic plus dead-letter topic over in-consumer retries, because blocking a partition stalls all shipments behind one bad message and triggers rebalances.",
  ["Retry topic: shipment.events.retry (3 attempts)", "DLQ: shipment.events.dlq", "Attempt count in header x-attempt"],
  ["kafka", "retry", "dead letter queue"], ["internal/events/consumer.go"], [])
O(28, 7, "change", "Commit offsets only after processing", "At-least-once delivery",
  "Autocommit was on, so a crash lost events. The consumer now disables autocommit and commits marked records after successful handling; handlers are idempotent on event id.",
  ["kgo.DisableAutoCommit(), cl.CommitRecords(ctx, recs...)", "processed_events table with unique event_id"],
  ["kafka", "delivery semantics"], ["internal/events/consumer.go"], ["internal/events/consumer.go", "migrations/0014_processed_events.up.sql"])

O(29, 8, "change", "HorizontalPodAutoscaler on CPU 70%", "min 3, max 10 replicas",
  "Added an autoscaling/v2 HPA to handle morning peaks.",
  ["deploy/helm/router/templates/hpa.yaml averageUtilization: 70", "minReplicas 3, maxReplicas 10"],
  ["autoscaling", "kubernetes", "hpa"], [], ["deploy/helm/router/templates/hpa.yaml", "deploy/helm/router/values-prod.yaml"])
O(30, 8, "bugfix", "HPA never scaled: missing CPU request", "failed to get cpu utilization",
  "kubectl describe hpa showed FailedGetResourceMetric: failed to get cpu utilization: missing request for cpu, so replicas stayed at 3 during the peak. The deployment now sets requests cpu 250m, memory 384Mi.",
  ["failed to get cpu utilization: missing request for cpu", "resources.requests: cpu 250m, memory 384Mi"],
  ["autoscaling", "kubernetes", "resources"], ["deploy/helm/router/templates/hpa.yaml"], ["deploy/helm/router/values-prod.yaml"])
O(31, 8, "change", "PodDisruptionBudget minAvailable 2", "Protects against node drains",
  "A node pool upgrade drained two nodes at once and took all replicas down. A PDB keeps at least two pods available.",
  ["deploy/helm/router/templates/pdb.yaml minAvailable: 2"],
  ["kubernetes", "availability"], [], ["deploy/helm/router/templates/pdb.yaml"])
O(32, 8, "bugfix", "Helm release stuck in pending-upgrade", "another operation is in progress",
  "A cancelled CI job left the release in pending-upgrade, and the next deploy failed with Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress. Claude rolled back with helm rollback router 41 and CI now uses --atomic --timeout 10m.",
  ["Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress", "helm history router showed revision 42 pending-upgrade", "CI: helm upgrade --install --atomic --timeout 10m"],
  ["helm", "deployment", "ci"], [".github/workflows/deploy.yml"], [".github/workflows/deploy.yml"])

O(33, 9, "feature", "Database migrations run as a Helm pre-upgrade hook", "golang-migrate Job",
  "Migrations used to be applied by hand. A Job annotated helm.sh/hook: pre-install,pre-upgrade runs migrate -path /migrations -database $DATABASE_URL up before pods roll.",
  ["deploy/helm/router/templates/migrate-job.yaml", "migrate/migrate v4.17 image", "hook-weight -5"],
  ["database migration", "helm", "kubernetes"], [], ["deploy/helm/router/templates/migrate-job.yaml"])
O(34, 9, "bugfix", "Migration job failed with a dirty database version", "Previous migration half-applied",
  "The hook failed with error: Dirty database version 17. Fix and force version. after migration 17 timed out halfway. Claude inspected schema_migrations, completed the missing statement manually, ran migrate force 17 and re-ran the upgrade.",
  ["error: Dirty database version 17. Fix and force version.", "migrate -database $DATABASE_URL force 17"],
  ["database migration", "postgres"], ["migrations/0017_shipment_eta.up.sql"], [])
O(35, 9, "change", "Index migration split out to run without a transaction", "CREATE INDEX CONCURRENTLY",
  "Migration 17 failed because CREATE INDEX CONCURRENTLY cannot run inside a transaction block. The index moved into its own file 0018 and golang-migrate runs each file as-is (no implicit tx with multi-statement disabled).",
  ["ERROR: CREATE INDEX CONCURRENTLY cannot run inside a transaction block (SQLSTATE 25001)", "migrations/0018_idx_shipments_status.up.sql"],
  ["database migration", "index"], ["migrations/0017_shipment_eta.up.sql"], ["migrations/0017_shipment_eta.up.sql", "migrations/0018_idx_shipments_status.up.sql"])
O(36, 9, "discovery", "Failed hook Jobs block the next migration run", "hook-delete-policy needed",
  "Helm does not recreate a Job with the same name, so the next upgrade failed with 'jobs.batch \"router-migrate\" already exists'. Added helm.sh/hook-delete-policy: before-hook-creation.",
  ["jobs.batch \"router-migrate\" already exists", "helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded"],
  ["helm", "database migration"], ["deploy/helm/router/templates/migrate-job.yaml"], ["deploy/helm/router/templates/migrate-job.yaml"])

O(37, 10, "decision", "Autoscale on Kafka consumer lag with KEDA instead of CPU", "CPU did not track event backlog",
  "Event bursts built up lag for 20 minutes while CPU stayed at 40%, so the CPU HPA never reacted. The team moved scaling to a KEDA ScaledObject on consumer group lag, replacing the hand-written HPA.",
  ["KEDA kafka scaler, lagThreshold: 500", "hpa.yaml removed; KEDA creates its own HPA", "CPU trigger kept as secondary at 80%"],
  ["autoscaling", "keda", "kafka"], ["deploy/helm/router/templates/hpa.yaml"], [])
O(38, 10, "change", "Added KEDA ScaledObject for router", "templates/scaledobject.yaml",
  "The chart now renders a ScaledObject with the kafka trigger reading bootstrap servers and consumer group from values.",
  ["deploy/helm/router/templates/scaledobject.yaml", "consumerGroup: router-events, topic: shipment.events", "minReplicaCount: 0, maxReplicaCount: 20"],
  ["autoscaling", "keda", "helm"], [], ["deploy/helm/router/templates/scaledobject.yaml", "deploy/helm/router/values-prod.yaml"])
O(39, 10, "bugfix", "KEDA scaled beyond the partition count", "Replicas above 12 sat idle",
  "With maxReplicaCount 20, eight replicas had no partitions assigned. maxReplicaCount is now 12 to match shipment.events partitions.",
  ["Topic partitions: 12", "maxReplicaCount: 12"],
  ["autoscaling", "kafka", "keda"], ["deploy/helm/router/templates/scaledobject.yaml"], ["deploy/helm/router/values-prod.yaml"])
O(40, 10, "change", "Raised pgxpool MaxConns from 10 to 25", "After moving to a larger RDS instance",
  "The database moved to db.r6g.xlarge with max_connections 1000, and pool waits showed up in traces at 10 connections. MaxConns is now 25 per pod (12 pods x 25 = 300).",
  ["MaxConns = 25 via DB_MAX_CONNS", "pgxpool stat EmptyAcquireCount was rising", "RDS max_connections 1000"],
  ["connection pool", "database"], ["internal/store/pool.go"], ["internal/store/pool.go", "deploy/helm/router/values-prod.yaml"])

O(41, 11, "change", "OpenTelemetry tracing for gRPC and HTTP", "otelgrpc stats handler, OTLP to the collector",
  "Traces are exported over OTLP/gRPC to the in-cluster collector; sampling is parent-based with 10% root sampling.",
  ["otelgrpc.NewServerHandler()", "OTEL_EXPORTER_OTLP_ENDPOINT=otel-collector.observability:4317", "TraceIDRatioBased(0.1)"],
  ["tracing", "observability", "opentelemetry"], ["cmd/router/main.go"], ["cmd/router/main.go", "internal/telemetry/otel.go"])
O(42, 11, "bugfix", "Traces broke at the Kafka boundary", "Context not propagated in message headers",
  "Spans from the producer and consumer ended up in separate traces. The producer injects traceparent into record headers and the consumer extracts it with a propagation.TextMapCarrier adapter.",
  ["internal/events/headers.go kafkaHeaderCarrier", "otel.GetTextMapPropagator().Inject(ctx, carrier)"],
  ["tracing", "kafka", "context propagation"], ["internal/events/consumer.go"], ["internal/events/headers.go", "internal/events/consumer.go"])
O(43, 11, "change", "Custom latency histogram buckets", "5ms to 10s",
  "Default Prometheus buckets topped out at 10s but were coarse below 100ms where most quote calls land.",
  ["prometheus.ExponentialBucketsRange(0.005, 10, 14)", "router_request_duration_seconds"],
  ["metrics", "prometheus"], ["internal/telemetry/metrics.go"], ["internal/telemetry/metrics.go"])
O(44, 11, "bugfix", "Prometheus memory blew up from a high-cardinality label", "shipment_id used as a metric label",
  "The Prometheus server went from 4 GB to 19 GB after a release that labelled router_quote_total with shipment_id, creating millions of series. The label was removed; per-shipment detail belongs in traces.",
  ["router_quote_total{carrier, shipment_id} -> {carrier, outcome}", "Active series 120k -> 3.1M -> 118k"],
  ["metrics", "prometheus", "cardinality"], ["internal/telemetry/metrics.go"], ["internal/telemetry/metrics.go"])

O(45, 12, "change", "Upgraded Go 1.21 to 1.23", "go.mod and Dockerfile builder image",
  "go.mod go directive 1.23 and golang:1.23-bookworm builder. Test suite and race tests green.",
  ["go.mod: go 1.23.2", "Dockerfile FROM golang:1.23-bookworm AS build"],
  ["dependency upgrade", "go version"], ["go.mod"], ["go.mod", "Dockerfile"])
O(46, 12, "discovery", "Go 1.22 loop variable semantics fixed a latent dispatcher bug", "Goroutines captured the last carrier",
  "With per-iteration loop variables, TestDispatchAllCarriers suddenly saw quotes from every carrier; before the upgrade goroutines in dispatchQuotes captured the shared loop variable and some requests went only to the last carrier.",
  ["internal/routing/dispatch.go for _, c := range carriers { go func() { quote(c) }() }", "Explains sporadic missing carriers in quote responses"],
  ["go version", "closures", "concurrency"], ["internal/routing/dispatch.go"], [])
O(47, 12, "refactor", "Replaced gorilla/mux with the Go 1.22 ServeMux", "Method and wildcard patterns",
  "Admin HTTP routes now use patterns like mux.HandleFunc(\"GET /admin/carriers/{id}\", ...) and r.PathValue(\"id\"), removing the gorilla/mux dependency.",
  ["internal/admin/routes.go", "gorilla/mux removed from go.mod"],
  ["refactor", "http routing"], ["internal/admin/routes.go"], ["internal/admin/routes.go", "go.mod"])
O(48, 12, "bugfix", "Admin endpoints returned 404 for trailing slashes after the router switch", "ServeMux pattern semantics",
  "gorilla/mux had StrictSlash(true); the std mux treats /admin/carriers/ and /admin/carriers differently, so existing scripts got 404. Added explicit redirects for the three affected routes.",
  ["GET /admin/carriers/ -> 404 after refactor", "Registered \"GET /admin/carriers/{$}\" with redirect"],
  ["http routing", "regression"], ["internal/admin/routes.go"], ["internal/admin/routes.go"])

O(49, 13, "bugfix", "One failing carrier cancelled the whole quote fan-out", "errgroup context cancelled siblings",
  "Quote requests returned context canceled for all carriers when any one failed, because errgroup.WithContext cancels the shared context on the first error. The fan-out now collects per-carrier results and errors and returns partial quotes.",
  ["rpc error: code = Canceled desc = context canceled", "internal/routing/dispatch.go no longer uses errgroup.WithContext"],
  ["concurrency", "error handling", "carriers"], ["internal/routing/dispatch.go"], ["internal/routing/dispatch.go"])
O(50, 13, "change", "Circuit breaker around the FastFreight client", "sony/gobreaker",
  "When FastFreight degrades, every quote waited for its 800ms deadline. A breaker opens after 5 consecutive failures and half-opens after 30s.",
  ["github.com/sony/gobreaker v1.0", "ReadyToTrip: ConsecutiveFailures >= 5, Timeout 30s"],
  ["circuit breaker", "resilience", "carriers"], ["internal/carriers/fastfreight.go"], ["internal/carriers/fastfreight.go"])
O(51, 13, "bugfix", "TLS to carrier-api failed after their certificate rotation", "x509: certificate signed by unknown authority",
  "Calls failed with transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority; the carrier moved to a private CA. The CA bundle is mounted from a ConfigMap and loaded into the client's RootCAs.",
  ["x509: certificate signed by unknown authority", "ConfigMap carrier-ca mounted at /etc/router/ca", "CARRIER_CA_FILE env var"],
  ["tls", "certificates", "kubernetes"], ["internal/carriers/client.go"], ["internal/carriers/client.go", "deploy/helm/router/templates/deployment.yaml"])
O(52, 13, "change", "NetworkPolicy restricting router egress", "Only DB, Kafka, carrier-api and DNS",
  "Security review asked for least-privilege egress. A NetworkPolicy allows only the required destinations; the first attempt forgot DNS on port 53/UDP and broke all lookups until fixed.",
  ["deploy/helm/router/templates/networkpolicy.yaml", "Allow kube-dns UDP/TCP 53"],
  ["kubernetes", "security", "network policy"], [], ["deploy/helm/router/templates/networkpolicy.yaml"])

O(53, 14, "bugfix", "Scale-to-zero caused 90s delays for the first morning events", "KEDA minReplicaCount raised to 2",
  "Overnight the router scaled to zero, and the first events each morning waited for image pull and startup, about 90s, also leaving the gRPC API with no pods. minReplicaCount is now 2; the CPU trigger stays as secondary.",
  ["minReplicaCount: 0 -> 2", "gRPC API had no ready endpoints at 05:00"],
  ["autoscaling", "keda", "cold start"], ["deploy/helm/router/templates/scaledobject.yaml"], ["deploy/helm/router/values-prod.yaml"])
O(54, 14, "change", "Runtime image switched to distroless static", "Image 1.1 GB -> 24 MB",
  "The final stage used the golang image. It is now gcr.io/distroless/static-debian12:nonroot with a CGO_ENABLED=0 build.",
  ["Dockerfile final stage distroless/static-debian12:nonroot", "Image 1.1 GB -> 24 MB", "runAsNonRoot: true"],
  ["docker", "image size", "security"], ["Dockerfile"], ["Dockerfile"])
O(55, 14, "change", "Retry topic delays 30s, 5m, 30m", "Delay enforced by pausing partitions",
  "Retried events were re-consumed immediately and failed again. The retry consumer now honours a not-before header, pausing the partition until the delay passes.",
  ["x-not-before header", "Delays: 30s, 5m, 30m then DLQ", "cl.PauseFetchPartitions / ResumeFetchPartitions"],
  ["kafka", "retry", "backoff"], ["internal/events/retry.go"], ["internal/events/retry.go"])
O(56, 14, "discovery", "DLQ replay tool in cmd/dlq-replay", "Existing but undocumented",
  "There is a small CLI that reads shipment.events.dlq and republishes selected events to the main topic, with --dry-run and --filter by event type.",
  ["go run ./cmd/dlq-replay --filter type=status_changed --dry-run", "Added docs/runbooks/dlq.md"],
  ["dead letter queue", "operations", "runbook"], ["cmd/dlq-replay/main.go"], ["docs/runbooks/dlq.md"])

Q("paraphrase", "pods kept getting restarted whenever the database was sluggish", [5])
Q("paraphrase", "the carrier ended up with the same parcel booked twice", [18])
Q("paraphrase", "service did not add more instances during the morning rush even though it was overloaded", [30])
Q("paraphrase", "clients saw errors every time we rolled out a new version", [7, 8])
Q("file", "edits to internal/carriers/client.go", [17, 18, 19])
Q("file", "why was migrations/0018_idx_shipments_status.up.sql added", [35])
Q("error", "FATAL: sorry, too many clients already (SQLSTATE 53300)", [13])
Q("error", "Dirty database version 17. Fix and force version.", [34])
Q("error", "x509: certificate signed by unknown authority", [51])
Q("error", "panic: assignment to entry in nil map", [9])
Q("error", "UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress", [32])
Q("decision", "why dead letter topic instead of retrying inside the kafka consumer", [27])
Q("decision", "why didn't we add pgbouncer", [15])
Q("keyword", "GOMEMLIMIT automaxprocs", [23])
Q("keyword", "prometheus cardinality shipment_id", [44])
Q("keyword", "gobreaker fastfreight", [50])
Q("temporal", "how does the router autoscale now", [53, 37, 39])
Q("temporal", "current pgx pool max conns", [40])

# ---------------------------------------------------------------------------
# 5. lakehouse-etl: Airflow 2.x + dbt on BigQuery
# ---------------------------------------------------------------------------
project("etl", "/home/dev/lakehouse-etl", "2026-06-30", 14)

O(1, 1, "discovery", "Surveyed the Airflow + dbt repository", "dags/, dbt/, include/, docker-compose with CeleryExecutor",
  "Claude read through the data platform repo. Airflow DAGs live in dags/, shared Python helpers in include/, and a dbt project in dbt/ with staging, intermediate and marts layers targeting BigQuery.",
  ["Airflow 2.7.3 with CeleryExecutor in docker-compose", "dbt/models/{staging,intermediate,marts}", "22 DAGs, 310 dbt models"],
  ["project structure", "airflow", "dbt"], ["docker-compose.yml", "dbt/dbt_project.yml", "dags/daily_orders.py"], [])
O(2, 1, "discovery", "dbt targets BigQuery dataset analytics_prod via a service account", "profiles.yml uses keyfile path from env",
  "Production runs use the service account dbt-runner@acme-data.iam with a JSON keyfile mounted into the worker; dev targets write to per-user datasets dbt_<user>.",
  ["dbt/profiles.yml method: service-account, keyfile: \"{{ env_var('DBT_KEYFILE') }}\"", "location: EU", "maximum_bytes_billed: 2000000000000"],
  ["bigquery", "dbt profiles", "credentials"], ["dbt/profiles.yml"], [])
O(3, 1, "bugfix", "DAG import error: No module named 'include'", "Helpers not on the scheduler's PYTHONPATH",
  "After adding a helper module, the UI showed Broken DAG: [/opt/airflow/dags/daily_orders.py] ModuleNotFoundError: No module named 'include'. The compose file now mounts include/ under /opt/airflow/include and sets PYTHONPATH=/opt/airflow.",
  ["Broken DAG: ModuleNotFoundError: No module named 'include'", "docker-compose.yml PYTHONPATH=/opt/airflow", "Added .airflowignore for include/"],
  ["airflow", "imports", "docker"], ["docker-compose.yml"], ["docker-compose.yml", ".airflowignore"])
O(4, 1, "change", "pre-commit with sqlfluff for dbt models", "BigQuery dialect, jinja templater",
  "SQL style drifted across authors. sqlfluff lint runs in pre-commit and CI with the dbt templater disabled for speed (jinja templater with dummy macros).",
  [".pre-commit-config.yaml sqlfluff 3.0.7", ".sqlfluff dialect = bigquery, templater = jinja"],
  ["linting", "sql style"], [], [".pre-commit-config.yaml", ".sqlfluff"])

O(5, 2, "bugfix", "daily_orders loaded the wrong day when re-run", "Used datetime.now() instead of the data interval",
  "Clearing yesterday's run reloaded today's data because the extract query used datetime.now(). The query now uses {{ data_interval_start | ds }} so reruns and backfills are deterministic.",
  ["dags/daily_orders.py extract uses '{{ data_interval_start | ds }}'", "Removed datetime.now() from 4 DAGs"],
  ["airflow", "idempotency", "backfill"], ["dags/daily_orders.py"], ["dags/daily_orders.py", "dags/daily_refunds.py"])
O(6, 2, "change", "catchup=False as the default for new DAGs", "Prevents surprise backfills on deploy",
  "A new DAG with start_date six months back queued 180 runs on deploy. The DAG template and airflow.cfg now default catchup to False.",
  ["AIRFLOW__SCHEDULER__CATCHUP_BY_DEFAULT=False", "dags/templates/dag_template.py catchup=False"],
  ["airflow", "scheduling", "backfill"], [], ["docker-compose.yml", "dags/templates/dag_template.py"])
O(7, 2, "feature", "Ingest Salesforce opportunities to GCS", "simple_salesforce SOQL query, NDJSON output",
  "A new DAG pulls Opportunity and Account objects modified in the interval and writes NDJSON to gs://acme-lake/raw/salesforce/.",
  ["dags/ingest_salesforce.py", "include/salesforce.py query_all(soql)", "simple-salesforce 1.12"],
  ["ingestion", "salesforce", "gcs"], [], ["dags/ingest_salesforce.py", "include/salesforce.py"])
O(8, 2, "bugfix", "Salesforce ingestion hit the daily API request limit", "REQUEST_LIMIT_EXCEEDED",
  "Paging through 2M opportunities with the REST API failed with REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded. The DAG now uses the Bulk API 2.0 query job, which costs a handful of calls.",
  ["SalesforceError: REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded.", "include/salesforce.py uses sf.bulk2.Opportunity.query()", "Org limit 100k requests / 24h"],
  ["salesforce", "api limits", "ingestion"], ["include/salesforce.py"], ["include/salesforce.py"])

O(9, 3, "feature", "fct_events made incremental with merge on event_id", "materialized=incremental, unique_key=event_id",
  "The full rebuild of fct_events took 50 minutes. It is now incremental with the merge strategy, processing events newer than the max loaded timestamp.",
  ["dbt/models/marts/fct_events.sql config(materialized='incremental', unique_key='event_id', incremental_strategy='merge')", "partition_by event_date, cluster_by event_type"],
  ["dbt", "incremental models", "merge"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql"])
O(10, 3, "discovery", "Merge into fct_events scans the full 2.3 TB target", "About $11 per run",
  "INFORMATION_SCHEMA.JOBS showed each incremental run billing 2.3 TB because the MERGE join on event_id cannot prune partitions of the target.",
  ["total_bytes_billed 2.3 TB per run", "On-demand price ~$5/TB -> ~$11 per run, 4 runs/day"],
  ["bigquery", "cost", "incremental models"], ["dbt/models/marts/fct_events.sql"], [])
O(11, 3, "bugfix", "unique test on fct_events.event_id failed", "Late duplicates from the tracking SDK",
  "dbt test failed: Failure in test unique_fct_events_event_id: Got 412 results, configured to fail if != 0. The SDK resends events on flaky networks; staging now dedupes with QUALIFY ROW_NUMBER() OVER (PARTITION BY event_id ORDER BY received_at) = 1.",
  ["Failure in test unique_fct_events_event_id (models/marts/schema.yml)", "Got 412 results, configured to fail if != 0", "dbt/models/staging/stg_events.sql adds QUALIFY"],
  ["dbt tests", "deduplication"], ["dbt/models/staging/stg_events.sql"], ["dbt/models/staging/stg_events.sql"])
O(12, 3, "change", "Source freshness checks on raw tables", "warn_after 6h, error_after 24h",
  "Stale sources went unnoticed for a weekend. sources.yml now declares loaded_at_field and freshness thresholds, and dbt source freshness runs before the daily build.",
  ["dbt/models/staging/sources.yml freshness: warn_after {count: 6, period: hour}", "error_after {count: 24, period: hour}"],
  ["dbt", "data freshness", "monitoring"], [], ["dbt/models/staging/sources.yml"])

O(13, 4, "bugfix", "Sensors held all worker slots for hours", "GCSObjectExistenceSensor in poke mode",
  "Eight sensors waiting for partner files occupied all 8 Celery worker slots, so nothing else ran until noon. Sensors now use mode='reschedule' with poke_interval 300 and timeout 6h.",
  ["GCSObjectExistenceSensor(mode='reschedule', poke_interval=300, timeout=6*3600)", "Worker concurrency 8"],
  ["airflow", "sensors", "worker slots"], ["dags/partner_files.py"], ["dags/partner_files.py"])
O(14, 4, "change", "Standard retry settings in default_args", "3 retries with exponential backoff up to 1h",
  "Transient BigQuery and GCS errors failed whole DAG runs. Shared default_args set retries=3, retry_delay=5 minutes, retry_exponential_backoff=True and max_retry_delay=1 hour.",
  ["include/defaults.py DEFAULT_ARGS", "retries=3, retry_delay=timedelta(minutes=5)", "retry_exponential_backoff=True, max_retry_delay=timedelta(hours=1)"],
  ["airflow", "retry", "backoff"], [], ["include/defaults.py"])
O(15, 4, "bugfix", "dbt build task killed by execution_timeout", "AirflowTaskTimeout after 30 minutes",
  "The single BashOperator running dbt build failed with airflow.exceptions.AirflowTaskTimeout: Timeout, PID: 2817 on month-end when it took 41 minutes, and the retry rebuilt everything from scratch.",
  ["airflow.exceptions.AirflowTaskTimeout: Timeout, PID: 2817", "execution_timeout=timedelta(minutes=30)", "Month-end build 41 min"],
  ["airflow", "timeout", "dbt"], ["dags/dbt_daily.py"], [])
O(16, 4, "decision", "Run dbt through astronomer-cosmos instead of one BashOperator", "Per-model tasks and retries",
  "One monolithic dbt build meant any failure retried all 310 models. The team chose Cosmos to render each model as its own Airflow task, so retries, timeouts and logs are per model, accepting extra scheduler load.",
  ["astronomer-cosmos 1.4", "Alternative considered: dbt retry after failed BashOperator", "Rejected dbt Cloud on cost"],
  ["dbt", "airflow", "orchestration", "library choice"], ["dags/dbt_daily.py"], [])

O(17, 5, "change", "dbt_daily DAG rebuilt with a Cosmos DbtTaskGroup", "Models become Airflow tasks",
  "dags/dbt_daily.py now builds a DbtTaskGroup from the dbt project, with tests attached after each model.",
  ["DbtTaskGroup(project_config=ProjectConfig('/opt/airflow/dbt'), render_config=RenderConfig(test_behavior=TestBehavior.AFTER_EACH))"],
  ["dbt", "airflow", "cosmos"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
O(18, 5, "bugfix", "Cosmos DAG timed out during parsing", "DagBag import timeout after 30s",
  "The scheduler logged airflow.exceptions.AirflowTaskTimeout: DagBag import timeout for /opt/airflow/dags/dbt_daily.py after 30.0s because Cosmos ran dbt ls at parse time. Switched to LoadMode.DBT_MANIFEST reading a prebuilt manifest.json.",
  ["DagBag import timeout for /opt/airflow/dags/dbt_daily.py after 30.0s", "RenderConfig(load_method=LoadMode.DBT_MANIFEST)", "Parse time 45s -> 2.1s"],
  ["airflow", "dag parsing", "cosmos"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
O(19, 5, "change", "CI compiles the dbt manifest and ships it in the image", "dbt parse in the Docker build",
  "The Dockerfile runs dbt deps and dbt parse so target/manifest.json exists at runtime for Cosmos.",
  ["Dockerfile: RUN cd dbt && dbt deps && dbt parse", "manifest path /opt/airflow/dbt/target/manifest.json"],
  ["ci", "dbt", "docker"], ["Dockerfile"], ["Dockerfile"])
O(20, 5, "discovery", "Scheduler re-parses every DAG file every 30 seconds", "min_file_process_interval default",
  "With 22 DAG files and heavy imports the scheduler spent most CPU parsing. min_file_process_interval was raised to 120s.",
  ["AIRFLOW__SCHEDULER__MIN_FILE_PROCESS_INTERVAL=120", "Scheduler CPU 90% -> 35%"],
  ["airflow", "scheduler", "performance"], ["docker-compose.yml"], ["docker-compose.yml"])

O(21, 6, "bugfix", "BigQuery partition modification quota exceeded", "Hourly partitions on stg_web_sessions",
  "Loads started failing with Quota exceeded: Your table exceeded quota for Number of partition modifications to a column partitioned table. The hourly-partitioned staging table was rewritten by every micro-batch.",
  ["403 Quota exceeded: Your table exceeded quota for Number of partition modifications to a column partitioned table", "Limit 5000 modifications per day"],
  ["bigquery", "quotas", "partitioning"], ["dbt/models/staging/stg_web_sessions.sql"], [])
O(22, 6, "change", "stg_web_sessions partitioned by day instead of hour", "Cuts partition modifications 24x",
  "Partition granularity changed to day and the micro-batch cadence to hourly appends.",
  ["partition_by={'field': 'session_start', 'data_type': 'timestamp', 'granularity': 'day'}"],
  ["bigquery", "partitioning"], ["dbt/models/staging/stg_web_sessions.sql"], ["dbt/models/staging/stg_web_sessions.sql"])
O(23, 6, "change", "Upgraded dbt-core 1.7 to 1.8 with dbt-bigquery 1.8", "tests: renamed to data_tests:",
  "1.8 decouples adapters and adds unit tests. YAML 'tests:' keys were renamed to 'data_tests:' to silence deprecation warnings.",
  ["requirements.txt dbt-core==1.8.3, dbt-bigquery==1.8.2", "sed across 48 schema.yml files tests: -> data_tests:"],
  ["dependency upgrade", "dbt"], ["requirements.txt"], ["requirements.txt", "dbt/models/marts/schema.yml"])
O(24, 6, "bugfix", "dbt failed with 'dbt_utils' is undefined in the worker image", "Packages not installed after upgrade",
  "Runs failed with Compilation Error in model int_orders_enriched: 'dbt_utils' is undefined because the rebuilt image no longer ran dbt deps and dbt_packages/ was gitignored.",
  ["Compilation Error ... 'dbt_utils' is undefined", "dbt/packages.yml dbt_utils 1.2.0", "Dockerfile runs dbt deps before dbt parse"],
  ["dbt", "packages", "docker"], ["Dockerfile", "dbt/packages.yml"], ["Dockerfile"])

O(25, 7, "decision", "fct_events switched from merge to insert_overwrite", "Per-run scan 2.3 TB -> 40 GB",
  "Because MERGE could not prune the target, the team moved fct_events to the insert_overwrite strategy: whole event_date partitions are recomputed and replaced. Dedup moves entirely into staging, and unique_key is dropped.",
  ["incremental_strategy='insert_overwrite'", "Bytes billed per run 2.3 TB -> 40 GB", "Cost ~$44/day -> ~$0.80/day"],
  ["dbt", "incremental models", "bigquery", "cost"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql"])
O(26, 7, "change", "fct_events replaces only the last 3 days of partitions", "Static partitions list",
  "Using static partitions avoids the dynamic temp-table scan. The model replaces the partitions for the last 3 days, computed in a macro.",
  ["partitions=last_n_days(3) in dbt/macros/partitions.sql", "copy_partitions=true"],
  ["dbt", "partitioning"], ["dbt/models/marts/fct_events.sql"], ["dbt/models/marts/fct_events.sql", "dbt/macros/partitions.sql"])
O(27, 7, "bugfix", "Events arriving more than 3 days late were dropped", "Weekly backfill DAG added",
  "Mobile clients offline for a week upload old events that fell outside the 3-day window. A weekly DAG rebuilds the last 14 days of fct_events with --vars '{lookback_days: 14}'.",
  ["dags/fct_events_backfill.py schedule='0 5 * * 0'", "dbt run -s fct_events --vars '{lookback_days: 14}'", "~0.4% of events arrive >3 days late"],
  ["late arriving data", "backfill"], [], ["dags/fct_events_backfill.py", "dbt/macros/partitions.sql"])
O(28, 7, "change", "Set maximum_bytes_billed per dbt run", "Guards against accidental full scans",
  "The profile now caps each query at 500 GB; a model that exceeds it fails instead of silently costing money.",
  ["dbt/profiles.yml maximum_bytes_billed: 500000000000"],
  ["bigquery", "cost", "guardrails"], ["dbt/profiles.yml"], ["dbt/profiles.yml"])

O(29, 8, "change", "Daily DAG moved from 02:00 to 04:00 UTC", "Postgres export lands around 03:10",
  "The daily dbt run often started before the nightly orders export finished, producing empty days. Schedule changed to '0 4 * * *'.",
  ["dags/dbt_daily.py schedule='0 4 * * *'", "Export finished between 02:50 and 03:25 over the last 30 days"],
  ["airflow", "scheduling"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py"])
O(30, 8, "bugfix", "DAGs shifted an hour after the DST change", "start_date in Europe/Berlin",
  "Two DAGs defined start_date with pendulum.datetime(..., tz='Europe/Berlin') ran an hour earlier after the clocks changed, again racing the export. All DAGs now use UTC.",
  ["pendulum.datetime(2026, 1, 1, tz='UTC')", "default_timezone = utc in airflow.cfg"],
  ["airflow", "timezone", "dst"], ["dags/daily_orders.py"], ["dags/daily_orders.py", "dags/dbt_daily.py"])
O(31, 8, "feature", "Slack alerts on task failure", "on_failure_callback posts to #data-alerts",
  "Failures were only visible in the UI. A callback posts DAG, task, try number and log URL to Slack via the Slack webhook connection.",
  ["include/alerts.py slack_failure_callback(context)", "Connection id slack_data_alerts"],
  ["alerting", "slack", "airflow"], [], ["include/alerts.py", "include/defaults.py"])
O(32, 8, "bugfix", "Slack flooded with 120 messages for one failed run", "Callback fired per task and per retry",
  "When BigQuery had an outage every Cosmos model task failed and retried, sending 120 alerts. The callback moved to the DAG-level on_failure_callback and fires only once per DAG run.",
  ["DAG(on_failure_callback=slack_failure_callback)", "Removed from default_args"],
  ["alerting", "slack", "noise"], ["include/alerts.py"], ["include/alerts.py", "include/defaults.py"])

O(33, 9, "change", "Upgraded Airflow 2.7 to 2.9", "Constraints file for Python 3.11",
  "Installed apache-airflow==2.9.2 with the official constraints file and upgraded provider packages.",
  ["pip install apache-airflow==2.9.2 --constraint constraints-3.11.txt", "apache-airflow-providers-google 10.19"],
  ["dependency upgrade", "airflow"], ["requirements.txt"], ["requirements.txt", "Dockerfile"])
O(34, 9, "bugfix", "airflow db migrate failed on a lock timeout", "Scheduler still running during the upgrade",
  "The metadata DB migration failed with sqlalchemy.exc.OperationalError: (psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout because the old scheduler still held locks on task_instance. Stopping scheduler and workers first let it complete.",
  ["(psycopg2.errors.LockNotAvailable) canceling statement due to lock timeout", "Upgrade runbook: stop scheduler, workers, triggerer before airflow db migrate"],
  ["airflow", "database migration", "upgrade"], [], ["docs/runbooks/airflow-upgrade.md"])
O(35, 9, "change", "Worker image moved to Python 3.11", "apache/airflow:2.9.2-python3.11",
  "The base image changed from python3.9; two DAGs needed small fixes for removed distutils usage.",
  ["Dockerfile FROM apache/airflow:2.9.2-python3.11", "Replaced distutils.util.strtobool in include/utils.py"],
  ["docker", "python version"], ["Dockerfile"], ["Dockerfile", "include/utils.py"])
O(36, 9, "change", "Replaced schedule_interval with schedule", "Deprecation warnings in 2.9",
  "All DAG definitions now use the schedule argument; schedule_interval emits RemovedInAirflow3Warning.",
  ["RemovedInAirflow3Warning: Param `schedule_interval` is deprecated", "22 DAG files updated"],
  ["airflow", "deprecation"], [], ["dags/daily_orders.py", "dags/dbt_daily.py", "dags/ingest_salesforce.py"])

O(37, 10, "feature", "SCD type 2 customer history with dbt snapshots", "snapshots/customers_snapshot.sql",
  "Finance needed customer attributes as of invoice date. A dbt snapshot tracks changes to the Postgres customers table.",
  ["dbt/snapshots/customers_snapshot.sql strategy='check', check_cols='all'", "dim_customers joins on dbt_valid_from/dbt_valid_to"],
  ["dbt snapshots", "scd2"], [], ["dbt/snapshots/customers_snapshot.sql", "dbt/models/marts/dim_customers.sql"])
O(38, 10, "bugfix", "Snapshot created a new version of every customer each run", "check_cols='all' included a float score column",
  "The snapshot table grew by 1.4M rows per day. A lifetime_value FLOAT column changed in the last decimal on every export, so every row looked changed.",
  ["customers_snapshot grew 1.4M rows/day", "lifetime_value recomputed nightly upstream"],
  ["dbt snapshots", "data quality"], ["dbt/snapshots/customers_snapshot.sql"], ["dbt/snapshots/customers_snapshot.sql"])
O(39, 10, "decision", "Snapshots use the timestamp strategy on updated_at", "Instead of check_cols",
  "The source table has a reliable updated_at maintained by a trigger, so the team chose strategy='timestamp' over listing check columns, which would need maintenance whenever columns are added.",
  ["strategy='timestamp', updated_at='updated_at'", "Trigger set_updated_at on customers table verified"],
  ["dbt snapshots", "scd2"], ["dbt/snapshots/customers_snapshot.sql"], ["dbt/snapshots/customers_snapshot.sql"])
O(40, 10, "change", "First dbt unit tests for the revenue model", "dbt 1.8 unit_tests",
  "int_revenue_recognition has tricky proration; unit tests with given/expect rows cover annual, monthly and mid-period upgrade cases.",
  ["dbt/models/intermediate/_unit_tests.yml", "dbt test --select test_type:unit"],
  ["tests", "dbt unit tests"], ["dbt/models/intermediate/int_revenue_recognition.sql"], ["dbt/models/intermediate/_unit_tests.yml"])

O(41, 11, "change", "stg_web_sessions build time cut from 14 to 3 minutes", "Clustering on user_id and partition filter",
  "The model scanned all history on each run. Adding cluster_by ['user_id'] and an incremental filter on the session_start partition reduced slot time by 78%.",
  ["cluster_by=['user_id']", "Build 14m -> 3m, bytes 610 GB -> 38 GB"],
  ["performance", "bigquery", "clustering"], ["dbt/models/staging/stg_web_sessions.sql"], ["dbt/models/staging/stg_web_sessions.sql"])
O(42, 11, "bugfix", "Attribution model ran out of memory in BigQuery", "Resources exceeded during query execution",
  "int_attribution failed with Resources exceeded during query execution: The query could not be executed in the allotted memory. Peak usage: 146% of limit. An ARRAY_AGG ... ORDER BY over all touches per user was the cause; it now limits to the last 50 touches.",
  ["Resources exceeded during query execution: The query could not be executed in the allotted memory", "ARRAY_AGG(t ORDER BY ts DESC LIMIT 50)"],
  ["bigquery", "memory", "sql"], ["dbt/models/intermediate/int_attribution.sql"], ["dbt/models/intermediate/int_attribution.sql"])
O(43, 11, "change", "BigQuery job labels for cost attribution", "dbt query-comment job_label",
  "Each dbt query now carries labels for the model and DAG so billing export can group costs.",
  ["dbt_project.yml query-comment: {job-label: true}", "Labels: dbt_model, airflow_dag"],
  ["bigquery", "cost", "observability"], [], ["dbt/dbt_project.yml"])
O(44, 11, "discovery", "Three models account for 61% of BigQuery spend", "From the labelled billing export",
  "Ranking the billing export by dbt_model label shows int_attribution, stg_web_sessions and fct_sessions dominate cost.",
  ["int_attribution 27%, stg_web_sessions 19%, fct_sessions 15%"],
  ["bigquery", "cost"], [], [])

O(45, 12, "decision", "dbt_daily now triggered by Airflow Datasets instead of a cron time", "Runs as soon as the exports land",
  "Moving the schedule to 04:00 still failed on slow export nights and wasted hours on fast ones. The team switched dbt_daily to a Dataset schedule so it runs when the export DAGs mark their outputs updated, replacing the 04:00 cron.",
  ["dags/dbt_daily.py schedule=[ORDERS_EXPORT, CUSTOMERS_EXPORT]", "Datasets defined in include/datasets.py"],
  ["airflow", "data-aware scheduling", "datasets"], ["dags/dbt_daily.py"], ["dags/dbt_daily.py", "include/datasets.py"])
O(46, 12, "change", "Export DAGs declare Dataset outlets", "outlets=[Dataset('gs://acme-lake/exports/orders/')]",
  "The final upload task in each export DAG lists the dataset URI as an outlet so Airflow records the update.",
  ["include/datasets.py ORDERS_EXPORT = Dataset('gs://acme-lake/exports/orders/')", "dags/export_orders.py upload task outlets"],
  ["airflow", "datasets"], [], ["dags/export_orders.py", "dags/export_customers.py"])
O(47, 12, "bugfix", "dbt_daily ran twice when exports finished at different times", "Orders export updated twice after a retry",
  "A retried orders export emitted two dataset events, queuing an extra dbt_daily run with only orders updated. Exports now only mark the dataset on success of the final task and dbt_daily has max_active_runs=1.",
  ["max_active_runs=1", "Dataset event only from the final upload task"],
  ["airflow", "datasets", "duplicate runs"], ["dags/export_orders.py"], ["dags/dbt_daily.py", "dags/export_orders.py"])
O(48, 12, "change", "Deadline alert if dbt_daily has not finished by 08:00 UTC", "Replaces Airflow SLA misses",
  "SLA callbacks are unreliable with dataset schedules, so a small DAG at 08:00 checks the last successful dbt_daily run and alerts Slack if it is older than 20 hours.",
  ["dags/dbt_daily_deadline.py schedule='0 8 * * *'"],
  ["alerting", "sla"], [], ["dags/dbt_daily_deadline.py"])

O(49, 13, "bugfix", "Salesforce bulk jobs failed with an expired session", "SalesforceExpiredSession",
  "Long bulk queries over 2 hours failed with simple_salesforce.exceptions.SalesforceExpiredSession: Expired session. The helper now re-authenticates and resumes polling the job id.",
  ["simple_salesforce.exceptions.SalesforceExpiredSession", "include/salesforce.py _with_session_refresh()"],
  ["salesforce", "authentication", "ingestion"], ["include/salesforce.py"], ["include/salesforce.py"])
O(50, 13, "change", "Explicit schemas for GCS to BigQuery loads", "autodetect turned off",
  "Schema autodetect guessed a ZIP code column as INTEGER and dropped leading zeros. Load jobs now use JSON schema files in include/schemas/.",
  ["GCSToBigQueryOperator(autodetect=False, schema_object='schemas/accounts.json')", "postal_code STRING"],
  ["bigquery", "schema", "ingestion"], ["dags/ingest_salesforce.py"], ["dags/ingest_salesforce.py", "include/schemas/accounts.json"])
O(51, 13, "bugfix", "CSV load rejected rows with embedded newlines", "Switched partner loads to NDJSON",
  "Partner loads failed with Error while reading data, error message: CSV table encountered too many errors, giving up. Rows: 1; errors: 1. Notes fields contained newlines; the extract now writes newline-delimited JSON.",
  ["CSV table encountered too many errors, giving up. Rows: 1; errors: 1", "source_format='NEWLINE_DELIMITED_JSON'"],
  ["bigquery", "file formats", "ingestion"], ["dags/partner_files.py"], ["dags/partner_files.py", "include/extract.py"])
O(52, 13, "refactor", "Shared GcsToBqIngest task group for ingestion DAGs", "Replaces copy-pasted operators",
  "Five ingestion DAGs repeated the same extract, upload, load, freshness-check sequence. include/ingest.py provides a TaskGroup factory.",
  ["include/ingest.py gcs_to_bq_ingest(source, table, schema)"],
  ["refactor", "airflow", "ingestion"], ["dags/ingest_salesforce.py", "dags/partner_files.py"], ["include/ingest.py", "dags/ingest_salesforce.py", "dags/partner_files.py"])

O(53, 14, "bugfix", "fct_orders missed updated orders in incremental runs", "Timestamp comparison across time zones",
  "The incremental filter compared updated_at (DATETIME in local time) with max(updated_at) stored as TIMESTAMP, silently skipping updates made in the first two hours after midnight. Both sides are now TIMESTAMP in UTC with a 2-hour lookback.",
  ["where updated_at > (select timestamp_sub(max(updated_at), interval 2 hour) from {{ this }})", "stg_orders casts to TIMESTAMP with 'Europe/Berlin'"],
  ["dbt", "incremental models", "timezone"], ["dbt/models/marts/fct_orders.sql"], ["dbt/models/marts/fct_orders.sql", "dbt/models/staging/stg_orders.sql"])
O(54, 14, "change", "Relationship tests to Salesforce accounts set to warn", "Orphans expected during sync lag",
  "Orders reference accounts created minutes earlier that may not be ingested yet, so the relationships test is severity warn with a threshold.",
  ["config: {severity: error, error_if: '>100', warn_if: '>0'}"],
  ["dbt tests", "data quality"], [], ["dbt/models/marts/schema.yml"])
O(55, 14, "change", "Added elementary for data observability", "Anomaly tests on row counts",
  "The elementary dbt package records test results and runs volume anomaly tests on key marts; reports go to Slack daily.",
  ["packages.yml elementary-data/elementary 0.15", "elementary.volume_anomalies on fct_orders, fct_events"],
  ["monitoring", "data quality"], [], ["dbt/packages.yml", "dbt/models/marts/schema.yml"])
O(56, 14, "discovery", "Airflow pool 'bigquery' limits concurrent BigQuery tasks to 8", "Cosmos tasks queue behind it",
  "Cosmos model tasks all use pool='bigquery' with 8 slots, which is why the daily build shows long queued times. Raising it needs a BigQuery slot reservation review.",
  ["Pool bigquery: 8 slots", "Median queued time per model 2m40s"],
  ["airflow", "pools", "concurrency"], ["dags/dbt_daily.py"], [])

Q("paraphrase", "rerunning yesterday's job pulled in today's rows instead", [5])
Q("paraphrase", "tasks that just wait for files were hogging every worker", [13])
Q("paraphrase", "the events fact table cost a fortune every time it refreshed", [10, 25])
Q("paraphrase", "chat channel flooded with alerts from a single broken run", [32])
Q("file", "dags/dbt_daily.py parse timeout", [18])
Q("file", "history of dbt/snapshots/customers_snapshot.sql", [37, 38, 39])
Q("error", "REQUEST_LIMIT_EXCEEDED: TotalRequests Limit exceeded", [8])
Q("error", "exceeded quota for Number of partition modifications to a column partitioned table", [21, 22])
Q("error", "AirflowTaskTimeout: Timeout, PID", [15])
Q("error", "CSV table encountered too many errors, giving up", [51])
Q("error", "'dbt_utils' is undefined", [24])
Q("decision", "why run dbt with cosmos instead of one bash task", [16])
Q("decision", "why timestamp strategy for the customer snapshot", [39])
Q("keyword", "sensor reschedule mode", [13])
Q("keyword", "dbt source freshness", [12])
Q("keyword", "airflow retry_exponential_backoff default_args", [14])
Q("temporal", "what triggers the daily dbt DAG now", [45, 29])
Q("temporal", "which incremental strategy does fct_events use at the moment", [25, 26])

# ---------------------------------------------------------------------------
# 6. fieldnotes-android: Kotlin / Jetpack Compose / Room / WorkManager
# ---------------------------------------------------------------------------
project("android", "/home/dev/fieldnotes-android", "2026-07-07", 14)

O(1, 1, "discovery", "Explored the FieldNotes Android project modules", "Multi-module Gradle build with Hilt",
  "FieldNotes is an offline-first inspection notes app. The build has :app, :core:data, :core:database, :core:network, :feature:notes and :feature:sync modules, wired with Hilt and written in Compose.",
  ["settings.gradle.kts includes 6 modules", "Hilt 2.48, Compose BOM 2024.02", "minSdk 21, targetSdk 34"],
  ["project structure", "android", "gradle"], ["settings.gradle.kts", "app/build.gradle.kts"], [])
O(2, 1, "discovery", "Room database is at schema version 7 with exported schemas", "core/database/schemas/",
  "NoteDatabase has entities Note, Attachment, Inspection and SyncState; schema JSON files are exported and committed, which enables migration tests later.",
  ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt version = 7", "room.schemaLocation = core/database/schemas"],
  ["room", "database schema"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt"], [])
O(3, 1, "bugfix", "Gradle build failed on JDK 21", "Unsupported class file major version 65",
  "A fresh checkout failed during configuration with General error during conversion: Unsupported class file major version 65 because the machine defaulted to JDK 21, newer than AGP 8.1 supported. The build now declares a JDK 17 toolchain.",
  ["Unsupported class file major version 65", "kotlin { jvmToolchain(17) } in convention plugin", "gradle.properties org.gradle.java.home removed"],
  ["gradle", "jdk", "build"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])
O(4, 1, "change", "Introduced a Gradle version catalog", "gradle/libs.versions.toml",
  "Dependency versions were duplicated across module build files. They now live in libs.versions.toml with bundles for compose and room.",
  ["gradle/libs.versions.toml [versions], [libraries], [bundles]", "implementation(libs.bundles.compose)"],
  ["gradle", "dependencies"], [], ["gradle/libs.versions.toml", "app/build.gradle.kts", "core/database/build.gradle.kts"])

O(5, 2, "bugfix", "Note editor crashed after rotation", "ViewModel could not be created",
  "Rotating the device in the editor crashed with java.lang.RuntimeException: Cannot create an instance of class com.fieldnotes.notes.NoteEditorViewModel. The ViewModel had an @Inject constructor but no @HiltViewModel annotation, and the screen used viewModel() instead of hiltViewModel().",
  ["Cannot create an instance of class com.fieldnotes.notes.NoteEditorViewModel", "Added @HiltViewModel, screen uses hiltViewModel()"],
  ["hilt", "viewmodel", "crash"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt"])
O(6, 2, "bugfix", "Notes list re-rendered every row on each change", "LazyColumn items had no keys",
  "Editing one note recomposed all visible rows and scrolling stuttered. items() now passes key = { it.id } and the row takes stable parameters.",
  ["LazyColumn items(notes, key = { it.id })", "Layout Inspector recomposition counts dropped from ~40 to 1"],
  ["compose", "recomposition", "performance"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"])
O(7, 2, "feature", "Photo attachments captured with CameraX", "ImageCapture to app-private storage",
  "Inspectors can attach photos to notes. CameraX ImageCapture writes JPEGs into filesDir/attachments and an Attachment row links them to the note.",
  ["androidx.camera 1.3.1", "feature/notes/.../camera/CaptureScreen.kt"],
  ["camera", "attachments"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/CaptureScreen.kt", "core/database/src/main/java/com/fieldnotes/db/Attachment.kt"])
O(8, 2, "bugfix", "Sharing a photo crashed with FileUriExposedException", "file:// URI passed to another app",
  "Share to email crashed with android.os.FileUriExposedException: file:///data/user/0/com.fieldnotes/files/attachments/a1.jpg exposed beyond app through ClipData.Item.getUri(). Sharing now uses FileProvider content URIs with FLAG_GRANT_READ_URI_PERMISSION.",
  ["android.os.FileUriExposedException ... exposed beyond app through ClipData.Item.getUri()", "app/src/main/res/xml/file_paths.xml", "FileProvider authority com.fieldnotes.fileprovider"],
  ["file sharing", "fileprovider", "crash"], ["app/src/main/AndroidManifest.xml"], ["app/src/main/AndroidManifest.xml", "app/src/main/res/xml/file_paths.xml"])

O(9, 3, "feature", "Background sync with a 15-minute periodic WorkManager job", "SyncWorker pushes and pulls notes",
  "SyncWorker uploads dirty notes and attachments, then pulls server changes since the last cursor. It is enqueued as unique periodic work every 15 minutes, the WorkManager minimum.",
  ["feature/sync/.../SyncWorker.kt CoroutineWorker", "PeriodicWorkRequestBuilder<SyncWorker>(15, TimeUnit.MINUTES)", "enqueueUniquePeriodicWork(\"sync\", KEEP, ...)"],
  ["sync", "workmanager", "background work"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt", "app/src/main/java/com/fieldnotes/App.kt"])
O(10, 3, "bugfix", "Notes duplicated on the server after a sync retry", "POST retried after a read timeout",
  "On poor mobile coverage the POST /notes succeeded server-side but the response timed out, WorkManager retried and the server created a second note. Notes now get a client-generated UUID and sync uses PUT /notes/{id} as an upsert.",
  ["java.net.SocketTimeoutException: timeout during POST /notes", "Note.id is UUID generated on device", "PUT /notes/{id} is idempotent"],
  ["idempotency", "sync", "retry"], ["core/network/src/main/java/com/fieldnotes/net/NotesApi.kt"], ["core/network/src/main/java/com/fieldnotes/net/NotesApi.kt", "feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])
O(11, 3, "change", "Sync work uses exponential backoff starting at 30s", "Result.retry() on IOException",
  "Network failures return Result.retry() and the request sets BackoffPolicy.EXPONENTIAL with 30 seconds; HTTP 4xx return Result.failure() so bad data does not loop.",
  ["setBackoffCriteria(BackoffPolicy.EXPONENTIAL, 30, TimeUnit.SECONDS)", "4xx -> Result.failure(), IOException/5xx -> Result.retry()"],
  ["retry", "backoff", "workmanager"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])
O(12, 3, "change", "OkHttp timeouts tuned for photo uploads", "connect 10s, read 30s, write 60s",
  "Default 10s write timeout failed large photo uploads on 3G. The client now uses 10s connect, 30s read and 60s write timeouts, with callTimeout 2 minutes.",
  ["core/network/.../NetworkModule.kt OkHttpClient.Builder().connectTimeout(10s).readTimeout(30s).writeTimeout(60s).callTimeout(120s)"],
  ["timeout", "okhttp", "uploads"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])

O(13, 4, "decision", "Chose Coil over Glide for image loading", "Compose-first and coroutine based",
  "The app used Glide through an accompanist wrapper. Coil was chosen because it has first-class Compose support (AsyncImage), is built on coroutines and OkHttp which the app already uses, and adds less APK size.",
  ["Coil 2.6 chosen", "Glide compose integration was still beta", "APK size -310 KB after removing Glide"],
  ["image loading", "library choice", "compose"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], [])
O(14, 4, "refactor", "Replaced Glide calls with Coil AsyncImage", "Shared ImageLoader provided by Hilt",
  "All GlideImage usages were replaced with AsyncImage and a singleton ImageLoader with a 25% memory cache and disk cache under cacheDir/images.",
  ["core/ui/.../ImageLoaderModule.kt", "memoryCache maxSizePercent(0.25)"],
  ["image loading", "refactor"], [], ["core/ui/src/main/java/com/fieldnotes/ui/ImageLoaderModule.kt", "feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"])
O(15, 4, "bugfix", "OutOfMemoryError in the attachment grid on older devices", "Full 12 MP photos decoded for thumbnails",
  "Scrolling a note with 30 photos on a 2 GB device crashed with java.lang.OutOfMemoryError: Failed to allocate a 48000012 byte allocation with 25165824 free bytes. Thumbnails now request a 256px size so Coil downsamples on decode.",
  ["java.lang.OutOfMemoryError: Failed to allocate a 48000012 byte allocation", "ImageRequest.Builder.size(256)", "Samsung Galaxy A10, Android 10"],
  ["memory", "images", "crash"], ["feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/AttachmentGrid.kt"])
O(16, 4, "change", "Precomputed thumbnails stored next to attachments", "Grid scroll no longer decodes originals",
  "When a photo is captured, a 512px thumbnail is written alongside it; the grid loads thumbnails and the viewer loads the original.",
  ["attachments/<id>.jpg and attachments/<id>_thumb.jpg", "Thumbnail generated on Dispatchers.IO"],
  ["performance", "images"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"])

O(17, 5, "change", "Room schema version 8 adds notes.synced_at", "Migration MIGRATION_7_8",
  "The sync screen needs per-note last-synced time. Version 8 adds a nullable synced_at INTEGER column.",
  ["ALTER TABLE notes ADD COLUMN synced_at INTEGER", "NoteDatabase version = 8"],
  ["room", "database migration"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt"], ["core/database/src/main/java/com/fieldnotes/db/NoteDatabase.kt", "core/database/src/main/java/com/fieldnotes/db/Migrations.kt"])
O(18, 5, "bugfix", "Beta users crashed on launch after the schema bump", "Migration 7->8 not registered",
  "The beta crashed at first database access with java.lang.IllegalStateException: A migration from 7 to 8 was required but not found. MIGRATION_7_8 was defined but never passed to addMigrations() in the database builder.",
  ["IllegalStateException: A migration from 7 to 8 was required but not found", "DatabaseModule.kt .addMigrations(MIGRATION_5_6, MIGRATION_6_7, MIGRATION_7_8)", "Affected 140 beta installs"],
  ["room", "database migration", "crash"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"])
O(19, 5, "change", "Migration tests with MigrationTestHelper", "Every version from 5 to current",
  "An instrumented test creates each old schema, inserts sample rows, runs migrations and validates against the exported schema JSON.",
  ["core/database/src/androidTest/.../MigrationTest.kt", "helper.runMigrationsAndValidate(TEST_DB, 8, true, MIGRATION_7_8)"],
  ["tests", "room", "database migration"], [], ["core/database/src/androidTest/java/com/fieldnotes/db/MigrationTest.kt"])
O(20, 5, "decision", "No fallbackToDestructiveMigration in release builds", "Unsynced offline notes would be wiped",
  "Someone suggested fallbackToDestructiveMigration() to avoid migration crashes. The team rejected it for release builds because notes created offline and not yet synced exist only on the device; debug builds may still use it.",
  ["if (BuildConfig.DEBUG) fallbackToDestructiveMigration()", "Migration tests are the safety net instead"],
  ["room", "database migration", "data loss"], ["core/database/src/main/java/com/fieldnotes/db/DatabaseModule.kt"], [])

O(21, 6, "bugfix", "ANR on cold start from SharedPreferences commit()", "Synchronous disk write in Application.onCreate",
  "Android Vitals reported ANRs on app start; the trace showed SharedPreferencesImpl.commit blocking main while migrating settings. Settings moved to DataStore and the migration runs off the main thread.",
  ["ANR: Input dispatching timed out, main thread in SharedPreferencesImpl$EditorImpl.commit", "App.onCreate no longer touches prefs"],
  ["anr", "startup", "main thread"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt"])
O(22, 6, "change", "Settings migrated from SharedPreferences to Preferences DataStore", "SharedPreferencesMigration",
  "A Preferences DataStore with SharedPreferencesMigration replaces the legacy prefs file; settings are exposed as a Flow.",
  ["core/data/.../SettingsRepository.kt preferencesDataStore(name = \"settings\", produceMigrations = ...)", "datastore-preferences 1.0.0"],
  ["datastore", "settings"], [], ["core/data/src/main/java/com/fieldnotes/data/SettingsRepository.kt"])
O(23, 6, "change", "Cold start 2.4s to 1.1s with a baseline profile", "Macrobenchmark measured on Pixel 4a",
  "A baseline profile generated by a macrobenchmark module precompiles startup and list-scrolling paths, and Hilt initialisation of the sync graph is now lazy.",
  [":baselineprofile module with BaselineProfileRule", "timeToInitialDisplay median 2.4s -> 1.1s", "profileinstaller 1.3.1"],
  ["performance", "startup", "baseline profiles"], [], ["baselineprofile/build.gradle.kts", "app/src/main/baseline-prof.txt"])
O(24, 6, "change", "minSdk raised from 21 to 24", "Drops Android 5/6 (0.6% of installs)",
  "Supporting API 21-23 needed multidex and several compat workarounds. Play Console showed 0.6% of active installs below 24, so minSdk moved to 24.",
  ["minSdk = 24 in build-logic convention plugin", "Removed androidx.multidex"],
  ["min sdk", "android versions"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])

O(25, 7, "decision", "Sync interval changed from 15 minutes to 1 hour", "Battery complaints and excessive wakeups",
  "Play reviews complained about battery drain and Android Vitals flagged excessive wakeups. Since most inspectors sync at the end of a site visit anyway, the periodic sync moved to every hour.",
  ["PeriodicWorkRequestBuilder<SyncWorker>(1, TimeUnit.HOURS)", "Android Vitals: excessive wakeups 2.1% of sessions", "ExistingPeriodicWorkPolicy.UPDATE to replace the old schedule"],
  ["sync", "battery", "workmanager"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt"])
O(26, 7, "discovery", "Periodic sync never runs on some Xiaomi and Huawei phones", "Aggressive OEM battery management",
  "Support tickets showed notes not syncing for days on MIUI devices. The OEM kills background work unless the app is whitelisted; the settings screen now links to the battery optimisation page with instructions.",
  ["dontkillmyapp.com lists MIUI autostart restrictions", "Intent Settings.ACTION_REQUEST_IGNORE_BATTERY_OPTIMIZATIONS not allowed by Play policy for this app type"],
  ["sync", "oem", "battery"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/settings/src/main/java/com/fieldnotes/settings/SettingsScreen.kt"])
O(27, 7, "feature", "Manual 'Sync now' button using expedited work", "OneTimeWorkRequest with setExpedited",
  "Inspectors wanted to push notes before leaving a site. The button enqueues a unique one-time expedited SyncWorker and shows progress from WorkInfo.",
  ["OneTimeWorkRequestBuilder<SyncWorker>().setExpedited(OutOfQuotaPolicy.RUN_AS_NON_EXPEDITED_WORK_REQUEST)", "enqueueUniqueWork(\"sync-now\", REPLACE, ...)"],
  ["sync", "workmanager", "ui"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncNowButton.kt"])
O(28, 7, "bugfix", "Expedited sync crashed on Android 11 and lower", "getForegroundInfo not implemented",
  "On API 30 and below expedited work runs as a foreground service, and the worker crashed with IllegalStateException: Not implemented... getForegroundInfo. SyncWorker now overrides getForegroundInfo with a low-priority sync notification.",
  ["java.lang.IllegalStateException: Expedited WorkRequests require a ListenableWorker to provide an implementation for `getForegroundInfoAsync()`", "Notification channel 'sync' IMPORTANCE_LOW"],
  ["workmanager", "foreground service", "crash"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncWorker.kt"])

O(29, 8, "change", "Upgraded to Kotlin 2.0 (K2 compiler)", "AGP 8.5, Compose BOM 2024.06",
  "Kotlin 2.0.0 with the K2 compiler; full build time improved about 15%.",
  ["libs.versions.toml kotlin = \"2.0.0\", agp = \"8.5.0\"", "Clean build 4m05s -> 3m28s"],
  ["dependency upgrade", "kotlin"], ["gradle/libs.versions.toml"], ["gradle/libs.versions.toml"])
O(30, 8, "bugfix", "Build failed: Compose Compiler Gradle plugin required", "Kotlin 2.0 moved the compiler into the Kotlin repo",
  "After the upgrade Gradle failed with Starting in Kotlin 2.0, the Compose Compiler Gradle plugin is required when compose is enabled. The convention plugin now applies org.jetbrains.kotlin.plugin.compose and composeOptions.kotlinCompilerExtensionVersion was removed.",
  ["Starting in Kotlin 2.0, the Compose Compiler Gradle plugin is required when compose is enabled", "plugins { alias(libs.plugins.compose.compiler) }"],
  ["kotlin", "compose", "gradle"], ["build-logic/convention/src/main/kotlin/AndroidComposeConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidComposeConventionPlugin.kt", "gradle/libs.versions.toml"])
O(31, 8, "change", "Migrated Room and Hilt from kapt to KSP", "Clean build 3m28s -> 1m52s",
  "kapt was the slowest part of the build. Room and Hilt both support KSP; kapt was removed from all modules.",
  ["ksp(libs.room.compiler), ksp(libs.hilt.compiler)", "Clean build 3m28s -> 1m52s", "ksp 2.0.0-1.0.22"],
  ["build performance", "ksp", "kapt"], ["core/database/build.gradle.kts"], ["core/database/build.gradle.kts", "app/build.gradle.kts", "gradle/libs.versions.toml"])
O(32, 8, "bugfix", "Hilt KSP processing failed after the kapt removal", "Old Hilt version without K2 support",
  "KSP failed with [ksp] InjectProcessingStep was unable to process 'SyncRepository(...)' because 'error.NonExistentClass' could not be resolved. Hilt 2.48 did not support KSP2 with K2; upgrading to Hilt 2.51.1 fixed it.",
  ["[ksp] InjectProcessingStep was unable to process ... 'error.NonExistentClass' could not be resolved", "hilt = \"2.51.1\""],
  ["hilt", "ksp", "build"], ["gradle/libs.versions.toml"], ["gradle/libs.versions.toml"])

O(33, 9, "feature", "Offline edit conflict resolution", "Per-field last-write-wins",
  "Two inspectors editing the same note offline overwrote each other wholesale. Sync now sends changed fields with their edit time and the server merges field by field.",
  ["NoteChange(field, value, editedAt)", "Server endpoint PATCH /notes/{id}/fields"],
  ["sync", "conflict resolution", "offline first"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt", "core/network/src/main/java/com/fieldnotes/net/NotesApi.kt"])
O(34, 9, "decision", "Per-field last-write-wins instead of CRDTs", "Notes are short and edits rarely collide",
  "Claude compared a text CRDT (Automerge/Yjs) with per-field LWW. The team chose LWW because notes are short structured forms, concurrent edits to the same field are rare, and CRDT libraries on Android would add a JNI dependency and complex server changes.",
  ["Automerge-kotlin rejected (native libs, server rewrite)", "Conflicts logged for review in conflict_log table"],
  ["conflict resolution", "architecture", "sync"], [], [])
O(35, 9, "bugfix", "Edits lost on devices with a wrong clock", "Device timestamps used for last-write-wins",
  "A tablet with its clock set a day behind always lost conflicts, discarding fresh edits. Ordering now uses a server-issued revision number per field; device time is only a display hint.",
  ["NoteField.revision Long from server", "Tablet clock skew: -26h"],
  ["clock skew", "sync", "conflict resolution"], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/ConflictResolver.kt"])
O(36, 9, "change", "Robolectric tests for conflict resolution", "Fake server in MockWebServer",
  "Tests simulate two devices editing the same note against MockWebServer and check the merged result.",
  ["feature/sync/src/test/.../ConflictResolverTest.kt", "okhttp3.mockwebserver 4.12"],
  ["tests", "sync"], [], ["feature/sync/src/test/java/com/fieldnotes/sync/ConflictResolverTest.kt"])

O(37, 10, "bugfix", "Photo uploads rejected with HTTP 413", "Original 12 MP JPEGs exceeded the 10 MB limit",
  "Uploads from new phones failed with HTTP 413 Payload Too Large from the nginx ingress (client_max_body_size 10m). Photos are resized to a 2048px long edge at JPEG quality 85 before upload.",
  ["HTTP 413 Payload Too Large", "Resize to 2048px, quality 85: ~900 KB average", "Originals kept locally"],
  ["uploads", "images", "http status"], ["feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"])
O(38, 10, "change", "OkHttp interceptor retries 502/503/504", "Up to 3 attempts with jittered backoff",
  "The ingress returned 503 during backend deploys. A RetryInterceptor retries gateway errors up to 3 times with 500ms-4s jittered backoff.",
  ["core/network/.../RetryInterceptor.kt", "Retries on 502, 503, 504 and IOException"],
  ["retry", "okhttp", "interceptor"], [], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt", "core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])
O(39, 10, "bugfix", "Retry interceptor created duplicate attachments", "POST retried without idempotency",
  "Attachments appeared twice because the interceptor retried POST /attachments after a 504 even though the server had stored the file. The interceptor now only retries idempotent methods or requests carrying an Idempotency-Key header, which the uploader sets to the attachment UUID.",
  ["RetryInterceptor checks request.method in (GET, PUT, DELETE) or header Idempotency-Key", "Server dedupes on Idempotency-Key for 24h"],
  ["retry", "idempotency", "uploads"], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt"], ["core/network/src/main/java/com/fieldnotes/net/RetryInterceptor.kt", "feature/sync/src/main/java/com/fieldnotes/sync/AttachmentUploader.kt"])
O(40, 10, "change", "Certificate pinning for the API host", "OkHttp CertificatePinner with backup pin",
  "The security audit required pinning. The client pins the intermediate CA public key plus a backup key to survive certificate rotation.",
  ["CertificatePinner.Builder().add(\"api.fieldnotes.app\", \"sha256/...primary\", \"sha256/...backup\")", "Debug builds skip pinning for mitmproxy"],
  ["security", "tls", "okhttp"], [], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"])

O(41, 11, "bugfix", "Crash loading notes with large sketches", "SQLiteBlobTooBigException",
  "Notes with big hand-drawn sketches crashed the list with android.database.sqlite.SQLiteBlobTooBigException: Row too big to fit into CursorWindow requiredPos=0, totalRows=1. Sketch stroke JSON was stored inline in the notes table; it now lives in files with only a path in the row.",
  ["SQLiteBlobTooBigException: Row too big to fit into CursorWindow", "CursorWindow limit 2 MB", "Migration 8->9 moves sketch_json to files"],
  ["room", "crash", "storage"], ["core/database/src/main/java/com/fieldnotes/db/Note.kt"], ["core/database/src/main/java/com/fieldnotes/db/Note.kt", "core/database/src/main/java/com/fieldnotes/db/Migrations.kt"])
O(42, 11, "feature", "Full-text search over notes with Room FTS4", "NoteFts entity with external content",
  "Search previously used LIKE '%term%' and took 800ms on 20k notes. An @Fts4(contentEntity = Note::class) table indexes title and body; queries take under 20ms.",
  ["@Fts4(contentEntity = Note::class) data class NoteFts(title, body)", "LIKE 800ms -> FTS 15ms on 20k notes"],
  ["search", "fts", "room"], [], ["core/database/src/main/java/com/fieldnotes/db/NoteFts.kt", "core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"])
O(43, 11, "bugfix", "Search found nothing for partial words", "FTS MATCH needs a prefix wildcard",
  "Typing 'insp' found no notes containing 'inspection' because FTS tokens match whole words. The DAO now appends * to each token and escapes quotes.",
  ["NoteDao.search(query) uses MATCH :q with q = tokens.joinToString(\" \") { \"$it*\" }"],
  ["search", "fts"], ["core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"], ["core/database/src/main/java/com/fieldnotes/db/NoteDao.kt"])
O(44, 11, "change", "Search input debounced by 300ms", "Flow debounce in SearchViewModel",
  "Every keystroke hit the database. The query StateFlow is debounced by 300ms and distinctUntilChanged before flatMapLatest to the DAO.",
  ["queryFlow.debounce(300).distinctUntilChanged().flatMapLatest { dao.search(it) }"],
  ["search", "coroutines", "flow"], [], ["feature/notes/src/main/java/com/fieldnotes/notes/SearchViewModel.kt"])

O(45, 12, "decision", "Sync strategy revised: 6-hour periodic plus event triggers", "Replaces the hourly schedule",
  "Hourly sync still woke devices that had nothing to send. The team moved to a 6-hour periodic safety net plus expedited one-time syncs when a note is saved while online, when connectivity returns, and when the app comes to the foreground.",
  ["PeriodicWorkRequestBuilder<SyncWorker>(6, TimeUnit.HOURS)", "Triggers: note saved, network available, ProcessLifecycleOwner ON_START", "Wakeups down 70% vs hourly"],
  ["sync", "battery", "workmanager"], ["app/src/main/java/com/fieldnotes/App.kt"], ["app/src/main/java/com/fieldnotes/App.kt", "feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])
O(46, 12, "change", "Sync constraints: connected network and battery not low", "WorkManager Constraints",
  "Both periodic and triggered syncs require NetworkType.CONNECTED and setRequiresBatteryNotLow(true); photo uploads additionally prefer unmetered networks when the user enables Wi-Fi-only.",
  ["Constraints.Builder().setRequiredNetworkType(NetworkType.CONNECTED).setRequiresBatteryNotLow(true)", "Wi-Fi only setting -> NetworkType.UNMETERED"],
  ["sync", "workmanager", "constraints"], [], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])
O(47, 12, "change", "minSdk raised from 24 to 26", "java.time without desugaring, adaptive icons only",
  "With installs on API 24-25 at 0.9%, minSdk moved to 26, allowing removal of core library desugaring and legacy PNG launcher icons.",
  ["minSdk = 26", "Removed coreLibraryDesugaring dependency", "Removed mipmap-*dpi/ic_launcher.png"],
  ["min sdk", "android versions"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"], ["build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt", "app/build.gradle.kts"])
O(48, 12, "bugfix", "Crash on Android 14 registering the connectivity receiver", "RECEIVER_EXPORTED flag required",
  "The Play pre-launch report showed java.lang.SecurityException: com.fieldnotes: One of RECEIVER_EXPORTED or RECEIVER_NOT_EXPORTED should be specified when a receiver isn't being registered exclusively for system broadcasts. The receiver is now registered with ContextCompat.RECEIVER_NOT_EXPORTED.",
  ["SecurityException: One of RECEIVER_EXPORTED or RECEIVER_NOT_EXPORTED should be specified", "ContextCompat.registerReceiver(ctx, receiver, filter, ContextCompat.RECEIVER_NOT_EXPORTED)"],
  ["android 14", "broadcast receiver", "crash"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"], ["feature/sync/src/main/java/com/fieldnotes/sync/SyncScheduler.kt"])

O(49, 13, "bugfix", "Cursor jumped to the end while typing fast in the note body", "TextField state updated asynchronously",
  "The body TextField read its value from a ViewModel StateFlow updated via a coroutine, so fast typing raced and the cursor jumped. The editor now keeps text in local TextFieldState and pushes changes to the ViewModel.",
  ["BasicTextField(state = rememberTextFieldState())", "ViewModel receives snapshotFlow { state.text } debounced"],
  ["compose", "text input", "state"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorScreen.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteEditorViewModel.kt"])
O(50, 13, "feature", "Material 3 dynamic color and dark theme", "Uses wallpaper colors on Android 12+",
  "FieldNotesTheme picks dynamicDarkColorScheme/dynamicLightColorScheme on API 31+ and falls back to the brand palette.",
  ["core/ui/.../Theme.kt dynamicColor = Build.VERSION.SDK_INT >= 31"],
  ["theming", "material 3", "dark mode"], [], ["core/ui/src/main/java/com/fieldnotes/ui/Theme.kt"])
O(51, 13, "bugfix", "Release build crashed parsing API responses", "R8 stripped Gson model constructors",
  "Only the minified release crashed with java.lang.NoSuchMethodException: com.fieldnotes.net.dto.NoteDto.<init> []. R8 removed members Gson needs via reflection; a keep rule for the dto package fixed it short term.",
  ["java.lang.NoSuchMethodException: com.fieldnotes.net.dto.NoteDto.<init> []", "app/proguard-rules.pro -keep class com.fieldnotes.net.dto.** { *; }"],
  ["r8", "proguard", "serialization"], ["app/proguard-rules.pro"], ["app/proguard-rules.pro"])
O(52, 13, "refactor", "Replaced Gson with kotlinx.serialization", "No reflection, no keep rules",
  "To avoid further R8 surprises the DTOs use @Serializable and Retrofit uses the kotlinx serialization converter; the Gson keep rule was deleted.",
  ["retrofit2-kotlinx-serialization-converter", "Json { ignoreUnknownKeys = true }", "Removed com.google.code.gson"],
  ["serialization", "refactor"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt"], ["core/network/src/main/java/com/fieldnotes/net/NetworkModule.kt", "core/network/src/main/java/com/fieldnotes/net/dto/NoteDto.kt", "app/proguard-rules.pro"])

O(53, 14, "change", "Notes list jank reduced from 38% to 4% janky frames", "Stable UI models and remembered formatters",
  "JankStats showed 38% janky frames while scrolling. NoteRow received an unstable List and created a DateTimeFormatter per row; UI models are now @Immutable and the formatter is remembered.",
  ["@Immutable data class NoteRowUi", "Janky frames 38% -> 4% on Pixel 4a", "Compose compiler reports used to find unstable params"],
  ["performance", "compose", "recomposition"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/NotesListScreen.kt", "feature/notes/src/main/java/com/fieldnotes/notes/NoteRowUi.kt"])
O(54, 14, "bugfix", "Portrait photos shown sideways in thumbnails", "EXIF orientation ignored by ThumbnailWriter",
  "Thumbnails created with BitmapFactory ignored the EXIF orientation tag, so portrait photos appeared rotated. ThumbnailWriter reads ExifInterface and rotates the bitmap before saving.",
  ["androidx.exifinterface 1.3.7", "ExifInterface.TAG_ORIENTATION -> Matrix.postRotate"],
  ["images", "exif"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/ThumbnailWriter.kt"])
O(55, 14, "change", "targetSdk 35 with edge-to-edge", "enableEdgeToEdge and window insets",
  "Targeting API 35 enforces edge-to-edge. MainActivity calls enableEdgeToEdge() and screens apply WindowInsets.safeDrawing padding.",
  ["targetSdk = 35", "Scaffold contentWindowInsets = WindowInsets.safeDrawing"],
  ["target sdk", "edge to edge", "ui"], [], ["app/src/main/java/com/fieldnotes/MainActivity.kt", "build-logic/convention/src/main/kotlin/AndroidConventionPlugin.kt"])
O(56, 14, "discovery", "Top Crashlytics issue is a CameraX session closed on backgrounding", "IllegalStateException: Camera is closed",
  "The leading crash (0.3% of users) happens when the app is backgrounded mid-capture and takePicture runs against a closed camera. Logged for the next session.",
  ["java.lang.IllegalStateException: Camera is closed", "CaptureScreen.kt takePicture callback"],
  ["crash", "camera"], ["feature/notes/src/main/java/com/fieldnotes/notes/camera/CaptureScreen.kt"], [])

Q("paraphrase", "phone battery drains because the app keeps waking up", [25, 45])
Q("paraphrase", "notes showed up twice on the backend after a spotty connection", [10])
Q("paraphrase", "scrolling through lots of inspection pictures crashed cheap phones", [15])
Q("paraphrase", "tablet with the wrong date kept losing its changes", [35])
Q("file", "app/proguard-rules.pro keep rule", [51, 52])
Q("file", "RetryInterceptor.kt changes", [38, 39])
Q("error", "A migration from 7 to 8 was required but not found", [18])
Q("error", "Row too big to fit into CursorWindow", [41])
Q("error", "getForegroundInfoAsync expedited WorkRequests", [28])
Q("error", "HTTP 413 Payload Too Large on upload", [37])
Q("error", "Unsupported class file major version 65", [3])
Q("decision", "why coil and not glide", [13])
Q("decision", "why not just fall back to destructive migration", [20])
Q("keyword", "kapt to ksp build time", [31])
Q("keyword", "fts prefix serach", [43])
Q("keyword", "certificate pining", [40])
Q("temporal", "how often does background sync run now", [45, 25])
Q("temporal", "what is the current minSdk", [47])


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


def main():
    data = _build()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dataset.json")
    with open(out, "w") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    from bench.eval.dataset import load
    d = load(out)
    print(len(d["observations"]), "observations,", len(d["queries"]), "queries ->", out)


if __name__ == "__main__":
    main()

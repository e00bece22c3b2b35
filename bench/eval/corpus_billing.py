"""The own eval's hand-written corpus, acme-billing: Python 3.11 / Django / Celery / Stripe /
Postgres. ``write_dataset`` calls ``add`` in the corpus's order; the records are as they
were written, one per line."""

from bench.eval.dataset_spec import O, Q, project


def add():
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

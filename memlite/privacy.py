"""Privacy filters applied in the hook, before an event leaves the hook process.

STANDARD LIBRARY ONLY: every hook imports this module (DESIGN §5, §7). The code lives in
the ``memlite.redact`` package (engine, rules, judgments, tags, fields); this module is
the interface and its documentation. Each pattern compiles on first use (a hook run is
one process: most patterns never run).

* :func:`strip_tags` removes the tag families that must never be stored: ``<private>``
  (the user's own marker), ``<memlite-context>`` (our injected context: storing it would
  feed memory back into memory), ``<system-reminder>``, ``<system_instruction>``,
  ``<system-instruction>`` and ``<persisted-output>``. Case-insensitive, across lines,
  nested tags counted; an unclosed tag strips to the end of the text. A tagged region is
  removed, not replaced by a marker.
* :func:`redact` replaces secrets by ``[REDACTED:<kind>]``. Every rule reads raw text and
  JSON-escaped text alike (``\\"password\\": \\"…\\"`` in an MCP result or a curl
  ``--data-raw`` body; an unquoted value stops at a literal ``\\n``). The kinds:

  ``private_key``
      PEM private key blocks (``-----BEGIN [RSA |EC |OPENSSH |DSA |ENCRYPTED |PGP ]PRIVATE
      KEY[ BLOCK]-----`` to the matching END line, or to the end of the text when cut),
      also with ``\\n`` escapes inside JSON text (a GCP service-account file).
  ``aws_access_key_id``
      ``AKIA``/``ASIA`` + 16 upper-case letters or digits.
  ``aws_secret_access_key``
      a 40-character base64 value after ``aws_secret_access_key`` (any case, ``=``,
      ``:``, JSON or YAML) or ``SecretAccessKey`` (the AWS CLI's JSON).
  ``anthropic``, ``openai``
      ``sk-ant-…``; ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…`` whose body
      holds a random-looking run (16+ letters/digits with a digit), so that kebab-case words
      after ``sk-`` ("sk-learn-tutorial-for-beginners") and ``task-sk-2`` survive.
  ``github``
      ``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_`` + 30 or more, ``github_pat_…``.
  ``gitlab``
      ``glpat-…``, ``gldt-…``, ``glrt-…``.
  ``slack``, ``slack_webhook``
      ``xoxa-``, ``xoxb-``, ``xoxp-``, ``xoxr-``, ``xoxs-``, ``xoxe-`` tokens holding a
      digit; the path of a ``hooks.slack.com/services|workflows|triggers/…`` URL.
  ``stripe``
      ``sk_live_``, ``rk_live_``, ``sk_test_``, ``rk_test_``, ``whsec_`` keys. Publishable
      keys (``pk_live_``, ``pk_test_``) are public by design and survive.
  ``pypi``, ``npm``, ``twilio``, ``sendgrid``, ``google_api_key``, ``vault``, ``huggingface``
      ``pypi-AgE…``; ``npm_`` + 36; ``SK`` + 32 hex; ``SG.…….……``; ``AIza`` + 35;
      ``hvs.``/``hvb.``/``hvr.`` + 24 or more; ``hf_`` + 34 letters.
  ``jwt``
      three base64url segments, the first two starting ``eyJ``.
  ``auth_header``
      the credential of an ``Authorization: Bearer|Basic|Token|Bot|Digest <value>`` header,
      also as two string literals (``Header.Set("Authorization", "Bearer …")``), nginx's
      ``proxy_set_header Authorization "…"``, JSON and ``-H "…"``; a random-looking value
      after ``Bearer`` anywhere; the value of ``X-Api-Key``, ``Api-Key``, ``X-Auth-Token``,
      ``X-Access-Token``, ``X-Vault-Token``, ``Private-Token`` headers in the same forms.
      ``Bearer $TOKEN`` survives (a shell variable).
  ``password``
      the password of a URL or connection string, ``scheme://user:PASS@host`` (also with
      an empty user, ``redis://:PASS@host``), ``Password=…;``/``Pwd=…;`` in ADO-style
      strings, ``.pgpass`` lines (``host:port:db:user:PASS``), ``.netrc`` entries
      (``machine … login … password PASS``, on one line or several), and command-line
      flags: ``mysql -pPASS``/``-p'PASS'``, ``sshpass -p``, ``docker|podman|helm … login
      -p``, ``ssh-keygen -N``/``-P``, ``curl -u user:PASS``/``--user``, ``openssl -passin
      pass:PASS``, ``echo PASS | … --password-stdin`` (or ``passwd``, ``sudo -S``,
      ``kinit``), ``--password PASS``/``--token PASS``/``--passphrase PASS`` given with a
      space; a password in prose (``the passphrase is Tr0ub4dor&3``), when the value reads
      as a password (a digit or a symbol, inner capitals, 16+ characters, or quoted); a
      Docker ``auths`` entry (base64 of ``user:password`` under ``auth``).
  ``env``
      the value of an assignment to a secret-named key: ``.env`` lines (``*_KEY=``,
      ``*_TOKEN=``, ``*_SECRET=``, ``*_PASS=``, ``PASSWORD=``, ``PASSWD=``, ``PWD=``,
      ``export X=``, quoted values, ``--password=`` flags), YAML ``password: value``
      (the value alone on its line), JSON ``"api_key": "…"`` (quotes kept), INI/TOML
      ``password = "…"``, camelCase names (``apiKey``, ``clientSecret``), two literals
      (``("api_key", "…")``), Kubernetes/ECS ``name: DB_PASSWORD`` + ``value: …`` pairs.
      An upper-case ``*_KEY`` is a secret; a lower-case ``*_key`` only with a secret-ish
      prefix (``api_key``, ``secret_key``, ``access_key``, ``private_key``, …), since
      ``sort_key``/``cache_key`` are not.
  ``high_entropy``
      a random-looking value (20+ characters, mixed classes, Shannon entropy at least
      3.5 bits/char, not pure hex nor a UUID) in a weaker assignment position: ``key``,
      ``*_key`` (lower case), ``auth``, ``credential(s)``, ``signature``, identifiers
      such as ``id-token`` or ``secretRef``.
  ``api_key``
      a random-looking string literal given as the first argument of a client
      constructor (``Client("…")``, ``SomeApi('…')``): keys without a known prefix.

  What survives (the near misses, see ``tests/privacy/``): git commit ids, sha256
  digests and UUIDs anywhere, base64 of ordinary text, version strings, words like
  "token" or "password" in prose, ``-p 8080`` port flags, ``mysql -p shop`` (a prompt,
  then a database name). In secret positions a value survives when it is

  - empty, or a **placeholder**: ``$VAR``, ``${VAR}``, ``${{ secrets.X }}``, ``$(cmd)``,
    ``%s``, ``{name}``, ``{{ tpl }}``, ``<your-password>``, ``your_api_key_here``,
    ``change-me-in-production``, ``***``/``xxxx``/``...``, a word such as ``changeme``,
    ``password``, ``secret``, ``example``, ``none``, ``null``, ``true``, ``read``,
    ``write``, ``str`` (a type annotation). A placeholder leaks nothing, and redacting it
    would hide what a config file or a command meant;
  - **masked** (``gho_****``, ``sk-...abcd``, ``••••``) or a **documentation example**
    (any value holding ``EXAMPLE``, such as AWS's ``AKIAIOSFODNN7EXAMPLE``; a token
    whose body is a stand-in, ``xoxb-your-bot-token``, ``AKIAXXXXXXXXXXXXXXXX``);
  - **public**: Stripe publishable keys (``pk_live_…``), any value under a name holding
    ``public``/``publishable`` (WireGuard ``PublicKey``), ARNs (``arn:…``), SSH public
    keys, ``sha256:`` digests;
  - a **file path** (``/…``, ``./…``, ``~/…``, or a name ending ``.pem``, ``.key``,
    ``.json``, …): ``KEY_PATH=/etc/ssl/x.pem``, ``SSH_KEY=~/.ssh/id_ed25519``,
    ``PWD=/home/me/proj`` in an env dump (unless a path segment looks random);
  - **code**, not a literal: ``token=self.token``, ``password = getpass()``,
    ``secret = os.environ["X"]``, ``key=len``, ``token = next_token``. A quoted literal
    in code (``password = "hunter2"``) is redacted.

* :func:`clean` applies both to every string value of a JSON value (keys are left as
  they are: they are field names chosen by Claude Code, not user text). A one-word
  string value under a secret-named key (``{"password": "hunter2"}``), or the ``value``
  of a ``{"name": "DB_PASSWORD", "value": …}`` pair, is judged like the value of an
  assignment, since no ``=`` is left.

Linear time: each rule runs only where one of its trigger words occurs, every pattern is
bounded (caps, look-behinds, no nested quantifiers over overlapping classes), and dense
triggers switch a rule to one scan in C (``memlite/redact/engine.py``).
``tests/privacy/test_linear_time.py`` holds the adversarial suite and checks the time
per byte stays flat from 10 kB to 1 MB; ``bench/bench_privacy.py`` has the figures.
"""

from __future__ import annotations

from memlite.redact import RULES as _RULES  # noqa: F401 - the corpus test reads privacy._RULES
from memlite.redact import TAG_NAMES, clean, redact, strip_tags

__all__ = ["TAG_NAMES", "clean", "redact", "strip_tags"]

"""The redaction corpus of issue 9: secrets that must vanish, near misses that must survive.

Used by ``tests/privacy/test_redaction_corpus.py`` and ``bench/bench_privacy.py``.

* ``POSITIVES``: ``Sample(name, kind, secret, text)``. ``clean(text)`` must not contain
  ``secret`` and must contain ``[REDACTED:<kind>]`` (kind ``"tag"``: a tagged region,
  removed without a marker).
* ``NEGATIVES``: ``Miss(name, text)``. ``clean(text) == text``.

Every key is generated here from a seeded RNG (``fake``): the right shape, random
content, never a real credential. The texts are the places secrets turn up in a Claude
Code session: shell output, ``env`` dumps, ``.env`` files, JSON, YAML, stack traces,
prompts, ``curl`` commands.
"""

from __future__ import annotations

import base64
import random
import string
from typing import NamedTuple

_RNG = random.Random(9)
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


def fake(alphabet: str, size: int) -> str:
    """``size`` random characters of ``alphabet``, with at least one digit and one letter."""
    while True:
        text = "".join(_RNG.choice(alphabet) for _ in range(size))
        if (set(alphabet) & set(DIGITS)) and not any(c.isdigit() for c in text):
            continue
        if (set(alphabet) & set(LOWER + UPPER)) and not any(c.isalpha() for c in text):
            continue
        return text


def b64url(data: str) -> str:
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


class Sample(NamedTuple):
    name: str
    kind: str
    secret: str
    text: str


class Miss(NamedTuple):
    name: str
    text: str


def _jwt() -> str:
    header = b64url('{"alg":"HS256","typ":"JWT"}')
    claims = b64url('{"sub":"' + fake(DIGITS, 8) + '","name":"Test User","iat":1700000000}')
    return f"{header}.{claims}.{fake(B64URL, 43)}"


def _pem(label: str) -> str:
    body = "\n".join(fake(B64, 64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


AKIA = "AKIA" + fake(UPPER + DIGITS, 16)
ASIA = "ASIA" + fake(UPPER + DIGITS, 16)
AWS_SECRET = fake(B64, 40)
AWS_SECRET_2 = fake(ALNUM, 40)
ANTHROPIC = "sk-ant-api03-" + fake(B64URL, 80) + "AA"
ANTHROPIC_ADMIN = "sk-ant-admin01-" + fake(B64URL, 60)
OPENAI = "sk-" + fake(ALNUM, 48)
OPENAI_PROJ = "sk-proj-" + fake(B64URL, 100)
OPENAI_SVC = "sk-svcacct-" + fake(B64URL, 60)
GH = {prefix: f"{prefix}_" + fake(ALNUM, 36) for prefix in ("ghp", "gho", "ghu", "ghs", "ghr")}
GH_PAT = "github_pat_11" + fake(UPPER + DIGITS, 20) + "_" + fake(ALNUM, 59)
GLPAT = "glpat-" + fake(ALNUM + "-_", 20)
SLACK = {prefix: f"{prefix}-" + fake(DIGITS, 12) + "-" + fake(DIGITS, 13) + "-"
         + fake(ALNUM, 24) for prefix in ("xoxb", "xoxp", "xoxa", "xoxs")}
SLACK_HOOK = ("T" + fake(UPPER + DIGITS, 10) + "/B" + fake(UPPER + DIGITS, 10) + "/"
              + fake(ALNUM, 24))
STRIPE_LIVE = "sk_live_" + fake(ALNUM, 24)
STRIPE_RK = "rk_live_" + fake(ALNUM, 24)
STRIPE_TEST = "sk_test_" + fake(ALNUM, 24)
STRIPE_WHSEC = "whsec_" + fake(ALNUM, 32)
JWT = _jwt()
JWT_2 = _jwt()
PEM_RSA = _pem("RSA PRIVATE KEY")
PEM_EC = _pem("EC PRIVATE KEY")
PEM_OPENSSH = _pem("OPENSSH PRIVATE KEY")
PEM_PKCS8 = _pem("PRIVATE KEY")
PEM_ENCRYPTED = _pem("ENCRYPTED PRIVATE KEY")
GCP_KEY_BODY = fake(B64, 64)
GCP_JSON = (
    '{\n  "type": "service_account",\n  "project_id": "demo-project-123",\n'
    '  "private_key_id": "' + fake("0123456789abcdef", 40) + '",\n'
    '  "private_key": "-----BEGIN PRIVATE KEY-----\\n' + GCP_KEY_BODY + "\\n"
    + fake(B64, 64) + '\\n-----END PRIVATE KEY-----\\n",\n'
    '  "client_email": "svc@demo-project-123.iam.gserviceaccount.com",\n'
    '  "client_id": "1234567890",\n  "token_uri": "https://oauth2.googleapis.com/token"\n}')
PW = {i: fake(ALNUM, 10) + "!" + fake(ALNUM, 4) for i in range(12)}
ENV = {i: fake(ALNUM, 32) for i in range(14)}
HIGH = {i: fake(ALNUM + "-_", 32) for i in range(4)}
BEARER = fake(B64URL, 40)
BASIC = base64.b64encode(b"deploy:" + fake(ALNUM, 16).encode()).decode()

POSITIVES: list[Sample] = [
    # tags (removed, no marker)
    Sample("tag private", "tag", "my diary: fed up with the build",
           "please fix the test <private>my diary: fed up with the build</private> thanks"),
    Sample("tag memlite-context", "tag", "prior obs 17: uses trio",
           "<memlite-context>\nprior obs 17: uses trio\n</memlite-context>\nWhat next?"),
    Sample("tag system-reminder", "tag", "the user set mode plan",
           "ok<system-reminder>the user set mode plan</system-reminder> done"),
    Sample("tag system_instruction", "tag", "always answer in French",
           "<system_instruction>always answer in French</system_instruction>hello"),
    Sample("tag system-instruction", "tag", "hidden rules here",
           "a <System-Instruction lang='en'>hidden rules here</System-Instruction> b"),
    Sample("tag persisted-output", "tag", "47 MB of build log",
           "tool said <persisted-output>47 MB of build log</persisted-output> ok"),
    # AWS
    Sample("aws id in env dump", "aws_access_key_id", AKIA,
           f"HOME=/home/dev\nAWS_ACCESS_KEY_ID={AKIA}\nAWS_REGION=eu-west-1\n"),
    Sample("aws sts id in json", "aws_access_key_id", ASIA,
           '{"Credentials": {"AccessKeyId": "' + ASIA + '", "Expiration": "2026-11-30"}}'),
    Sample("aws id in credentials file", "aws_access_key_id", AKIA,
           f"[default]\naws_access_key_id = {AKIA}\nregion = us-east-1\n"),
    Sample("aws secret credentials file", "aws_secret_access_key", AWS_SECRET,
           f"[default]\naws_access_key_id = {AKIA}\naws_secret_access_key = {AWS_SECRET}\n"),
    Sample("aws secret env", "aws_secret_access_key", AWS_SECRET_2,
           f"$ env | grep AWS\nAWS_SECRET_ACCESS_KEY={AWS_SECRET_2}\n"),
    Sample("aws secret yaml", "aws_secret_access_key", AWS_SECRET,
           f"provider:\n  aws_secret_access_key: {AWS_SECRET}\n  region: eu-west-1\n"),
    Sample("aws secret cli json", "aws_secret_access_key", AWS_SECRET_2,
           '{"Credentials": {"SecretAccessKey": "' + AWS_SECRET_2 + '", "SessionToken": "x"}}'),
    # GCP service account
    Sample("gcp service account json", "private_key", GCP_KEY_BODY,
           f"$ cat sa.json\n{GCP_JSON}\n"),
    # Anthropic / OpenAI
    Sample("anthropic export", "anthropic", ANTHROPIC,
           f"$ export ANTHROPIC_API_KEY={ANTHROPIC}\n$ claude -p hi\n"),
    Sample("anthropic in prompt", "anthropic", ANTHROPIC_ADMIN,
           f"my admin key is {ANTHROPIC_ADMIN}, why does the API say 401?"),
    Sample("openai legacy in traceback", "openai", OPENAI,
           "Traceback (most recent call last):\n  File \"app.py\", line 3\n"
           f"openai.AuthenticationError: Incorrect API key provided: {OPENAI}.\n"),
    Sample("openai project key in code", "openai", OPENAI_PROJ,
           f'client = OpenAI(api_key="{OPENAI_PROJ}")\n'),
    Sample("openai service account", "openai", OPENAI_SVC,
           f"OPENAI_KEY={OPENAI_SVC}"),
    # GitHub
    *[Sample(f"github {prefix}", "github", token,
             f"remote: Invalid username or token. {token} is revoked\nfatal: auth failed")
      for prefix, token in GH.items()],
    Sample("github fine-grained pat", "github", GH_PAT,
           f"git clone https://x-access-token:{GH_PAT}@github.com/o/r.git"),
    Sample("github token in gh config yaml", "github", GH["gho"],
           f"github.com:\n    oauth_token: {GH['gho']}\n    user: dev\n"),
    # GitLab
    Sample("gitlab pat header", "gitlab", GLPAT,
           f'curl --header "PRIVATE-TOKEN: {GLPAT}" https://gitlab.example.com/api/v4/projects'),
    # Slack
    *[Sample(f"slack {prefix}", "slack", token,
             '{"ok": false, "error": "invalid_auth", "token": "' + token + '"}')
      for prefix, token in SLACK.items()],
    Sample("slack webhook", "slack_webhook", SLACK_HOOK,
           f"curl -X POST -d '{{\"text\":\"deployed\"}}' https://hooks.slack.com/services/{SLACK_HOOK}"),
    # Stripe
    Sample("stripe live in python", "stripe", STRIPE_LIVE, f'stripe.api_key = "{STRIPE_LIVE}"'),
    Sample("stripe restricted", "stripe", STRIPE_RK, f"STRIPE_RK={STRIPE_RK} npm start"),
    Sample("stripe test", "stripe", STRIPE_TEST,
           f"curl https://api.stripe.com/v1/charges -u {STRIPE_TEST}:"),
    Sample("stripe webhook secret", "stripe", STRIPE_WHSEC,
           f"Ready! Your webhook signing secret is {STRIPE_WHSEC} (^C to quit)"),
    # JWT
    Sample("jwt in log line", "jwt", JWT,
           f"2026-11-30T08:00:01Z INFO session={JWT} user=42 path=/api/me"),
    Sample("jwt in cookie", "jwt", JWT_2, f"Set-Cookie: id={JWT_2}; HttpOnly; Path=/"),
    # PEM
    Sample("pem rsa cat", "private_key", PEM_RSA.split("\n")[2],
           f"$ cat ~/.ssh/deploy_rsa\n{PEM_RSA}\n$ "),
    Sample("pem ec", "private_key", PEM_EC.split("\n")[1], f"key.pem:\n{PEM_EC}\n"),
    Sample("pem openssh", "private_key", PEM_OPENSSH.split("\n")[3], PEM_OPENSSH),
    Sample("pem pkcs8 in env", "private_key", PEM_PKCS8.split("\n")[1],
           f'PRIVATE_KEY="{PEM_PKCS8}"\nPORT=8080'),
    Sample("pem encrypted", "private_key", PEM_ENCRYPTED.split("\n")[2],
           f"Read file server.key\n{PEM_ENCRYPTED}"),
    Sample("pem cut off", "private_key", PEM_RSA.split("\n")[1],
           "\n".join(PEM_RSA.split("\n")[:3]) + "\n…[memlite: cut 9000 chars]…"),
    # Authorization headers
    Sample("bearer curl", "auth_header", BEARER,
           f'curl -s -H "Authorization: Bearer {BEARER}" https://api.example.com/v1/me'),
    Sample("basic header json", "auth_header", BASIC,
           '{"headers": {"Authorization": "Basic ' + BASIC + '"}}'),
    # passwords in URLs and connection strings
    Sample("postgres url", "password", PW[0],
           f"DATABASE_URL=postgres://app:{PW[0]}@db.internal:5432/app"),
    Sample("mysql url in traceback", "password", PW[1],
           "sqlalchemy.exc.OperationalError: (2003) Can't connect to "
           f"'mysql+pymysql://root:{PW[1]}@127.0.0.1:3306/shop'"),
    Sample("mongodb srv", "password", PW[2],
           f"mongodb+srv://admin:{PW[2]}@cluster0.ab1cd.mongodb.net/?retryWrites=true"),
    Sample("redis url", "password", PW[3], f"REDIS_URL=redis://default:{PW[3]}@cache:6379/0"),
    Sample("amqp url in yaml", "password", PW[4],
           f"broker:\n  url: amqp://guest:{PW[4]}@rabbit:5672/vhost\n"),
    Sample("ado connection string", "password", PW[5],
           f"Server=tcp:sql.example.net,1433;Database=app;User ID=sa;Password={PW[5]};"
           "Encrypt=True;"),
    Sample("ado pwd", "password", PW[6], f"Driver={{ODBC Driver 18}};Uid=app;Pwd={PW[6]};"),
    # .env-style assignments
    Sample("dotenv api key", "env", ENV[0], f"# .env\nAPI_KEY={ENV[0]}\nDEBUG=1\n"),
    Sample("dotenv token export", "env", ENV[1], f"export GITHUB_TOKEN={ENV[1]}"),
    Sample("dotenv secret quoted", "env", ENV[2], f"JWT_SECRET='{ENV[2]}'\n"),
    Sample("dotenv double quoted", "env", PW[7], f'DB_PASSWORD="{PW[7]}"'),
    Sample("password bare", "env", PW[8], f"PASSWORD={PW[8]}"),
    Sample("passwd", "env", PW[9], f"MYSQL_ROOT_PASSWD={PW[9]}"),
    Sample("pgpassword", "env", PW[10], f"PGPASSWORD={PW[10]} psql -h db -U app"),
    Sample("mysql pwd", "env", PW[3] + "m", f"$ MYSQL_PWD={PW[3]}m mysqldump shop > shop.sql"),
    Sample("db pass", "env", PW[11], f"DB_HOST=db\nDB_PASS={PW[11]}\n"),
    Sample("yaml password", "env", PW[2] + "y",
           f"database:\n  user: app\n  password: {PW[2]}y\n  host: db\n"),
    Sample("json api_key", "env", ENV[3], '{"service": "maps", "api_key": "' + ENV[3] + '"}'),
    Sample("json camel clientSecret", "env", ENV[4],
           '{"clientId": "web", "clientSecret": "' + ENV[4] + '"}'),
    Sample("cli flag", "env", PW[0] + "z", f"$ mysql --user=root --password={PW[0]}z db"),
    Sample("query token", "env", ENV[5],
           f"GET /download?file=report.pdf&token={ENV[5]}&v=2 HTTP/1.1"),
    Sample("x-api-key header", "auth_header", ENV[6], f"X-Api-Key: {ENV[6]}\nAccept: */*"),
    Sample("hardcoded in python", "env", PW[1] + "q", f'    password = "{PW[1]}q"\n'),
    Sample("docker compose env", "env", ENV[7],
           f"services:\n  web:\n    environment:\n      - SECRET_KEY={ENV[7]}\n"),
    Sample("k8s secret yaml", "env", ENV[8],
           f"apiVersion: v1\nkind: Secret\nstringData:\n  client_secret: {ENV[8]}\n"),
    Sample("toml token", "env", ENV[9], f'[tool.poetry]\n\n[auth]\ntoken = "{ENV[9]}"\n'),
    Sample("npmrc auth token", "env", ENV[10],
           f"//registry.npmjs.org/:_authToken={ENV[10]}"),
    Sample("session token env", "env", ENV[11], f"AWS_SESSION_TOKEN={ENV[11]}"),
    Sample("terraform tfvars", "env", ENV[12], f'cloudflare_api_token = "{ENV[12]}"\n'),
    Sample("env in prompt", "env", ENV[13],
           f"I set SENTRY_AUTH_TOKEN={ENV[13]} but the upload still fails, why?"),
    # high entropy in weak positions
    Sample("json key high entropy", "high_entropy", HIGH[0],
           '{"name": "prod", "key": "' + HIGH[0] + '"}'),
    Sample("yaml signature", "high_entropy", HIGH[1], f"webhook:\n  signature: {HIGH[1]}\n"),
    Sample("credentials field", "high_entropy", HIGH[2],
           '{"user": "ci", "credentials": "' + HIGH[2] + '"}'),
    Sample("auth field", "high_entropy", HIGH[3], f"registry:\n  auth: {HIGH[3]}\n"),
]

SHA1 = fake("0123456789abcdef", 40)
SHA256 = fake("0123456789abcdef", 64)
UUID = "3b241101-e2bb-4255-8caf-4136c566a962"
B64_TEXT = base64.b64encode(b"Hello, this is an ordinary sentence in base64.").decode()

NEGATIVES: list[Miss] = [
    Miss("git log", f"commit {SHA1}\nAuthor: Dev <dev@example.com>\nDate:   Mon Nov 30\n\n"
                    "    Fix the token parser\n"),
    Miss("git rev-parse", f"$ git rev-parse HEAD\n{SHA1}\n"),
    Miss("sha256sum", f"{SHA256}  dist/memlite-0.1.0.tar.gz\n"),
    Miss("pip hash", f"memlite==0.1.0 --hash=sha256:{SHA256}"),
    Miss("uuid in json", '{"session_id": "' + UUID + '", "cwd": "/home/dev/proj"}'),
    Miss("uuid request id", f"x-request-id: {UUID}"),
    Miss("base64 text", f"echo {B64_TEXT} | base64 -d"),
    Miss("empty password", "PASSWORD=\nUSER=dev\n"),
    Miss("empty json password", '{"user": "dev", "password": ""}'),
    Miss("placeholder var", "DB_PASSWORD=${DB_PASSWORD}"),
    Miss("placeholder var plain", 'export API_KEY="$API_KEY"'),
    Miss("placeholder angle", "password=<your-password>"),
    Miss("placeholder changeme", "ADMIN_PASSWORD=changeme"),
    Miss("placeholder your key", "OPENAI_API_KEY=your_api_key_here"),
    Miss("placeholder stars", "password: '********'"),
    Miss("placeholder xxx", "STRIPE_SECRET=xxxxxxxxxxxx"),
    Miss("placeholder template", 'password: "{{ .Values.db.password }}"'),
    Miss("placeholder command", 'TOKEN="$(cat /run/secrets/token)"'),
    Miss("placeholder bearer var", 'curl -H "Authorization: Bearer $TOKEN" https://api.x.io'),
    Miss("placeholder url", "postgres://app:${PGPASSWORD}@db:5432/app"),
    Miss("placeholder null json", '{"api_key": null, "token": "None"}'),
    Miss("version string", "memlite 0.1.0 (Python 3.11.7, SQLite 3.54.1, apsw 3.54.1.0)"),
    Miss("semver list", "Successfully installed trio-0.35.0 attrs-24.2.0 sniffio-1.3.1"),
    Miss("file paths", "/home/dev/proj/memlite/privacy.py:128: in redact\n"),
    Miss("key path", "KEY_PATH=/etc/ssl/private/server.pem"),
    Miss("ssh key path", "SSH_KEY=~/.ssh/id_ed25519"),
    Miss("tls key file", "TLS_KEY=certs/server.key\nTLS_CERT=certs/server.crt"),
    Miss("gcp credentials path", "GOOGLE_APPLICATION_CREDENTIALS=/secrets/sa.json"),
    Miss("pwd in env dump", "SHELL=/bin/bash\nPWD=/home/dev/proj\nOLDPWD=/home/dev\n"),
    Miss("token in prose", "The lexer emits a token for each word; the token stream then"
                           " goes to the parser."),
    Miss("token colon prose", "Token: the smallest unit the tokenizer produces"),
    Miss("password in prose", "Reset your password from the settings page, then log in."),
    Miss("secret in prose", "The secret to fast tests is to avoid sleeping."),
    Miss("sk in prose", "see task-sk-2 and risk-sk-ranking for the details"),
    Miss("sk kebab", "pip install sk-learn-tutorial-for-beginners"),
    Miss("sk short", "the sk-1 cluster is down"),
    Miss("python kwarg key", "sorted(items, key=lambda item: item.name)"),
    Miss("python token code", "    token = tokens[i]\n    if token == ')':\n"),
    Miss("python getpass", "    password = getpass.getpass()\n"),
    Miss("python environ", '    secret = os.environ["APP_SECRET"]\n'),
    Miss("python kwarg same name", "connect(host=host, password=password, token=token)"),
    Miss("js attribute", "const token = req.headers.authorization;"),
    Miss("ts type", "interface User {\n  password: string;\n  token?: string;\n}"),
    Miss("python annotation", "class Login:\n    token: str\n    password: SecretStr\n"),
    Miss("dataclass field", "    api_key: Optional[str] = None\n"),
    Miss("ordinary assignments", "MEMLITE_WORKER_PORT=37888\nLANG=C.UTF-8\nTERM=xterm"),
    Miss("monkey", "monkey=banana donkey=carrot"),
    Miss("bypass", "bypass=true compass=north"),
    Miss("sort key json", '{"sort_key": "created_at", "primary_key": "id"}'),
    Miss("key sha in json", '{"key": "' + SHA1 + '", "kind": "blob"}'),
    Miss("uuid idempotency key", f"Idempotency-Key: {UUID}"),
    Miss("aws example words", "ASIA is big and AKIA is not a word"),
    Miss("aws key id field name", "aws_access_key_id = \naws_secret_access_key = \n"),
    Miss("stripe publishable", "STRIPE_PK=pk_live_" + fake(ALNUM, 24)),
    Miss("stripe pk", "Stripe('pk_test_" + fake(ALNUM, 24) + "')"),
    Miss("eyJ alone", "the prefix eyJ starts a JSON object in base64"),
    Miss("jwt like two parts", "eyJhbGciOiJIUzI1NiJ9.payload"),
    Miss("url without password", "https://user@github.com/o/r.git and https://example.com:8443/x"),
    Miss("ssh git url", "git@github.com:anthropics/claude-code.git"),
    Miss("email", "contact: dev@example.com, admin:root@localhost is not a url"),
    Miss("slack docs url", "see https://api.slack.com/authentication/token-types"),
    Miss("github words", "the ghp_ prefix marks a classic personal access token"),
    Miss("glpat word", "GitLab tokens start with glpat- followed by 20 characters"),
    Miss("xox word", "Slack bot tokens look like xoxb-..."),
    Miss("pem public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
                           "-----END PUBLIC KEY-----"),
    Miss("certificate", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n"
                        "-----END CERTIFICATE-----"),
    Miss("pytest output", "==== 12 passed, 1 skipped in 3.21s ====\ntests pass: yes"),
    Miss("auth none yaml", "auth: none\nsignature: v1\ncredentials: default"),
    Miss("max tokens", '{"max_tokens": 1024, "input_tokens": 57, "model": "claude"}'),
    Miss("token count", "Token usage: 1,234 input, 567 output"),
    Miss("windows path", r"PWD=C:\Users\dev\proj"),
    Miss("html", '<input type="password" name="password" value="">'),
    Miss("rust path", "let t = token::Token::new(); let k = key::Key::default();"),
    Miss("redacted already", "API_KEY=[REDACTED:env] and [REDACTED:jwt]"),
    Miss("hex color and ids", "color: #ff8800; id: 7f3a9c2e; build 20261130.1"),
    Miss("stack trace", "Traceback (most recent call last):\n  File \"/usr/lib/python3.11/"
                        "json/decoder.py\", line 337, in decode\nKeyError: 'token'\n"),
    Miss("lt in text", "a < b and <privateer> and </persisted> are not our tags"),
]

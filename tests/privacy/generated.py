"""The generated redaction corpus of issue 15: shapes x surroundings, fixed seeds, dev/test.

Used by ``tests/privacy/test_generated_corpus.py`` and ``bench/bench_privacy.py``.

* ``POSITIVE_SHAPES``: a function ``(rng) -> (snippet, secret)`` per shape of secret, as it
  turns up in a session (a command-line flag, a header in two literals, a k8s pair, a
  ``.pgpass`` line, a password in prose, a provider token...). Every shape the issue lists
  as missed is here.
* ``NEGATIVE_SHAPES``: a function ``(rng) -> snippet`` per near miss that must survive
  (ports after ``-p``, placeholders, masked and public values, identifiers under
  secret-sounding names...). Every shape the issue lists as wrongly redacted is here.
* ``SURROUNDINGS``: each snippet is placed in raw shell output, a prompt, JSON-escaped
  text (an MCP result), a Python ``repr``, an ``env`` dump and source code, with a
  harmless ``keep`` line after it that must survive (a value must not run on into it).

``corpus(split)`` draws every shape in every surrounding with the split's own seed:
``dev`` (seed 1501) is what the rules were tuned on; ``test`` (seed 1502) is only
measured. The secrets are random (right shape, random content): never a real credential.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import NamedTuple

SEEDS = {"dev": 1501, "test": 1502}
UP, LO, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DIG
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


class Sample(NamedTuple):
    name: str  # shape/surrounding
    shape: str
    surrounding: str
    secret: str  # "" for a near miss
    text: str
    keep: str  # must survive in the output


def rand(rng: random.Random, alphabet: str, size: int) -> str:
    """``size`` characters of ``alphabet`` holding a digit and a letter when it has both."""
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(size))
        if set(alphabet) & set(DIG) and not any(c.isdigit() for c in out):
            continue
        if set(alphabet) & set(UP + LO) and not any(c.isalpha() for c in out):
            continue
        return out


def password(rng: random.Random) -> str:
    """A password as people make them: letters, digits, one symbol, 10-16 characters."""
    core = rand(rng, ALNUM, rng.randint(9, 15))
    cut = rng.randint(1, len(core) - 1)
    return core[:cut] + rng.choice("!#%^*+-_@") + core[cut:]


def _token(rng: random.Random) -> str:
    return rand(rng, ALNUM, rng.randint(32, 44))


def _jwt(rng: random.Random) -> str:
    def seg(data: str) -> str:
        return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")
    iat = rng.randint(1_600_000_000, 1_800_000_000)
    claims = '{"sub":"' + rand(rng, DIG, 8) + '","iat":' + str(iat) + "}"
    header = seg('{"alg":"HS256","typ":"JWT"}')
    return f"{header}.{seg(claims)}.{rand(rng, B64URL, 43)}"


def _pem(rng: random.Random) -> tuple[str, str]:
    body = [rand(rng, ALNUM + "+/", 64) for _ in range(4)]
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----"
    return text, body[1]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- positives: (rng) -> (snippet, secret) ----------------------------------------------

def _p(template: str, make=password):
    def shape(rng: random.Random) -> tuple[str, str]:
        secret = make(rng)
        return template.format(s=secret, n=rng.randint(2, 99)), secret
    return shape


def _pypi(rng):
    return "pypi-AgEIcHlwaS5vcmc" + rand(rng, B64URL, 70)


def _gh(rng):
    return "ghp_" + rand(rng, ALNUM, 36)


POSITIVE_SHAPES = {
    "mysql -p quoted": _p("$ mysql -u root -p'{s}' shop -e 'select 1'"),
    "mysqldump -p attached": _p("mysqldump -uroot -p{s} shop > shop.sql"),
    "docker login -p": _p("docker login -u ci -p {s} registry.example.com"),
    "password-stdin echo": _p("echo {s} | docker login --username ci --password-stdin ghcr.io"),
    "sudo -S echo": _p("echo '{s}' | sudo -S apt-get update"),
    "sshpass -p": _p("sshpass -p '{s}' ssh deploy@10.0.0.{n} uptime"),
    "ssh-keygen -N": _p("ssh-keygen -t ed25519 -N '{s}' -f ~/.ssh/deploy_{n}"),
    "curl -u user:pass": _p("curl -u admin:{s} https://jenkins.example.com/api/json"),
    "openssl -passin": _p("openssl rsa -in server.key -passin pass:{s} -out plain.key"),
    "long flag --password": _p("rclone config create box webdav --user me --password {s}"),
    "long flag --api-key": _p("deployctl push --api-key {s} --env prod", _token),
    "go Header.Set": _p('req.Header.Set("Authorization", "Bearer {s}")', _token),
    "nginx proxy_set_header": _p('proxy_set_header Authorization "Bearer {s}";', _token),
    "nginx x-api-key": _p('proxy_set_header X-Api-Key "{s}";', _token),
    "python headers dict": _p('headers = {{"X-Api-Key": "{s}", "Accept": "application/json"}}',
                              _token),
    "js headers object": _p("fetch(url, {{ headers: {{ 'x-api-key': '{s}' }} }})", _token),
    "python setdefault pair": _p('session.headers.update(("api_key", "{s}"))', _token),
    "curl -H x-api-key": _p('curl -H "X-Api-Key: {s}" https://api.example.com/v{n}/items',
                            _token),
    "k8s name value": _p('        - name: DB_PASSWORD\n          value: "{s}"'),
    "k8s name value bare": _p("  - name: API_TOKEN\n    value: {s}", _token),
    "ecs json pair": _p('{{"name": "STRIPE_SECRET", "value": "{s}"}}', _token),
    "pgpass line": _p("db.internal:5432:app:app_user:{s}"),
    "netrc line": _p("machine api.heroku.com login me@example.com password {s}", _token),
    "netrc multiline": _p("machine git.example.com\n  login deploy\n  password {s}"),
    "prose passphrase": _p("Unlock it for me, the passphrase is {s} (I will rotate it later)."),
    "prose password": _p("my password is {s}, can you log in to staging and check?"),
    "prose token backticks": _p("the token is `{s}` and it expires tomorrow", _token),
    "positional client": _p('client = WeatherClient("{s}")', _token),
    "positional sdk kwarg": _p("api = MapsApi(key='{s}')", _token),
    "redis empty user": _p("REDIS_URL=redis://:{s}@cache.internal:6379/0"),
    "postgres url": _p("postgresql://app:{s}@db.internal:5432/app"),
    "ado connection string": _p("Server=tcp:sql.example.net;Database=app;User ID=sa;"
                                "Password={s};Encrypt=True;"),
    "pypi token": _p("twine upload -u __token__ -p {s} dist/*", _pypi),
    "npm token": _p("Using auth token npm_{s} for registry.npmjs.org",
                    lambda r: rand(r, ALNUM, 36)),
    "twilio key": _p("twilio api:core:keys:list -> SK{s}", lambda r: rand(r, HEX, 32)),
    "sendgrid key": _p('sg = SendGridAPIClient("SG.{s}")',
                       lambda r: rand(r, B64URL, 22) + "." + rand(r, B64URL, 43)),
    "google api key": _p("https://maps.googleapis.com/maps/api/geocode/json?address=x&key=AIza{s}",
                         lambda r: rand(r, B64URL, 35)),
    "vault token": _p("export VAULT_TOKEN=hvs.{s}", lambda r: rand(r, B64URL, 90)),
    "huggingface token": _p("huggingface-cli login --token hf_{s}", lambda r: rand(r, UP + LO, 34)),
    "dockerconfigjson auths": _p('{{"auths": {{"ghcr.io": {{"auth": "{s}"}}}}}}',
                                 lambda r: _b64("ci-bot:" + password(r))),
    "json password": _p('{{"username": "admin", "password": "{s}"}}'),
    "env unquoted": _p("API_TOKEN={s}", _token),
    "env quoted": _p('DB_PASSWORD="{s}"'),
    "export token": _p("export GITHUB_TOKEN={s}", _gh),
    "yaml password": _p("database:\n  user: app\n  password: {s}\n  host: db"),
    "toml token": _p('[registry]\ntoken = "{s}"', _token),
    "ini password": _p("[mysql]\nuser = app\npassword = {s}"),
    "k8s secret stringData": _p("kind: Secret\nstringData:\n  client_secret: {s}", _token),
    "aws key id": _p("aws_access_key_id = AKIA{s}", lambda r: rand(r, UP + DIG, 16)),
    "aws secret": _p("aws_secret_access_key = {s}", lambda r: rand(r, ALNUM + "+/", 40)),
    "anthropic key": _p("ANTHROPIC_API_KEY=sk-ant-api03-{s}", lambda r: rand(r, B64URL, 90)),
    "openai key in code": _p('client = OpenAI(api_key="sk-proj-{s}")',
                             lambda r: rand(r, B64URL, 60)),
    "github pat in remote": _p("git remote set-url origin https://x-access-token:{s}@github.com/o/r",
                               _gh),
    "gitlab pat header": _p('curl --header "PRIVATE-TOKEN: glpat-{s}" https://gitlab.example.com',
                            lambda r: rand(r, ALNUM, 20)),
    "slack token json": _p('{{"ok": false, "token": "xoxb-{s}"}}',
                           lambda r: rand(r, DIG, 12) + "-" + rand(r, ALNUM, 24)),
    "stripe key python": _p('stripe.api_key = "sk_live_{s}"', lambda r: rand(r, ALNUM, 24)),
    "jwt cookie": _p("Set-Cookie: session={s}; HttpOnly; Path=/", _jwt),
    "bearer curl": _p('curl -H "Authorization: Bearer {s}" https://api.example.com/me', _token),
    "basic header dict": _p('{{"Authorization": "Basic {s}"}}',
                            lambda r: _b64("deploy:" + password(r))),
    "pem key": lambda rng: _pem(rng),
}

# --- near misses: (rng) -> snippet ------------------------------------------------------


def _n(template: str, make=lambda r: rand(r, ALNUM, 24)):
    def shape(rng: random.Random) -> str:
        return template.format(s=make(rng), n=rng.randint(2, 99), port=rng.randint(1024, 65000))
    return shape


NEGATIVE_SHAPES = {
    "ssh -p port": _n("ssh -p {port} deploy@10.0.0.{n}"),
    "docker run -p": _n("docker run -p {port}:80 -u 1000:1000 nginx:1.{n}"),
    "psql -p port": _n("psql -h db.internal -p 5432 -U app -d shop"),
    "mysql -p prompt": _n("mysql -u root -p shop"),
    "password-stdin var": _n('echo "$CR_PAT" | docker login ghcr.io -u me --password-stdin'),
    "password-stdin file": _n("docker login --password-stdin < ~/.config/token.txt"),
    "echo into wc": _n("echo build-{n} | wc -c"),
    "curl -u var": _n('curl -u "$JENKINS_USER:$JENKINS_TOKEN" https://jenkins.example.com'),
    "curl -u user only": _n("curl -u deploy https://files.example.com/f{n}.tar.gz"),
    "git push -u": _n("git push -u origin feature/login-{n}"),
    "ssh-keygen empty": _n("ssh-keygen -t ed25519 -N '' -f ~/.ssh/ci_{n}"),
    "openssl passin env": _n("openssl rsa -in server.key -passin env:KEY_PASS -out plain.key"),
    "header content-type": _n('req.Header.Set("Content-Type", "application/json")'),
    "header bearer var": _n('proxy_set_header Authorization "Bearer $http_x_token";'),
    "header doc placeholder": _n('curl -H "Authorization: Bearer <token>" https://api.example.com'),
    "x-api-key var": _n('curl -H "X-Api-Key: $API_KEY" https://api.example.com/items'),
    "k8s plain pair": _n("  - name: LOG_LEVEL\n    value: debug"),
    "k8s secretKeyRef": _n("  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
                           "        name: db-credentials\n        key: password"),
    "k8s existingSecret": _n("auth:\n  existingSecret: postgres-credentials\n"
                             "  secretKeys:\n    adminPasswordKey: admin-password"),
    "pgpass wildcard": _n("localhost:5432:*:postgres:*"),
    "netrc no password": _n("machine github.com login oauth-{n}"),
    "prose password short": _n("the password is too short, it needs {n} more characters"),
    "prose passphrase required": _n("the passphrase is required when the key is encrypted"),
    "prose token expired": _n("the token is expired, so refresh it and retry"),
    "prose quoted phrase": _n('set the password to "something secure" before the demo'),
    "prose key size": _n("the key is 2048 bits and the token is valid for {n} minutes"),
    "positional url": _n('client = WeatherClient("https://api.weather.example.com/v{n}")'),
    "positional name": _n('client = StorageClient("my-bucket-{n}")'),
    "redis no password": _n("REDIS_URL=redis://cache.internal:6379/{n}"),
    "npm env vars": _n("npm_config_cache=/home/dev/.npm\nnpm_package_version=1.{n}.0"),
    "pypi words": _n("pip install pypi-attestations pypi-simple=={n}.0"),
    "twilio-like words": _n("SKU-{n}: MASK 0x{port} SKETCH"),
    "sendgrid-like": _n("SG.{n} is the first step; see section SG.{n}.2"),
    "google prefix prose": _n("Google API keys start with AIza and have 39 characters"),
    "vault docs": _n("VAULT_TOKEN=hvs.example-token-for-docs"),
    "docker credsStore": _n('{{"auths": {{"ghcr.io": {{}}}}, "credsStore": "desktop"}}'),
    "stripe publishable under key": _n("STRIPE_PUBLISHABLE_KEY=pk_live_{s}"),
    "next public stripe key": _n("NEXT_PUBLIC_STRIPE_KEY=pk_test_{s}"),
    "slack placeholder": _n("SLACK_BOT_TOKEN=xoxb-your-bot-token"),
    "change-me placeholder": _n("SECRET_KEY=change-me-in-production"),
    "akia xs": _n("AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX"),
    "aws docs example": _n("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                           "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    "masked gho": _n("  - Token: gho_************************************"),
    "masked sk": _n("OPENAI_API_KEY=sk-...{n}ab"),
    "wireguard public key": _n("[Peer]\nPublicKey = {s}\nAllowedIPs = 10.0.0.{n}/32",
                               lambda r: _b64(rand(r, ALNUM, 32))),
    "actions id-token": _n("permissions:\n  id-token: write\n  contents: read"),
    "actions secrets expr": _n("        with:\n          token: ${{{{ secrets.GITHUB_TOKEN }}}}"),
    "arn under password key": _n('{{"MasterUserPassword": "arn:aws:secretsmanager:us-east-1:'
                                 '123456789012:secret:prod/db-{s}"}}',
                                 lambda r: rand(r, ALNUM, 6)),
    "commit id": _n("commit {s}\nAuthor: Dev <dev@example.com>", lambda r: rand(r, HEX, 40)),
    "sha256 digest": _n("sha256:{s}  dist/app-1.{n}.tar.gz", lambda r: rand(r, HEX, 64)),
    "uuid request id": _n("x-request-id: 3b241101-e2bb-4255-8caf-4136c566a9{n:02d}"),
    "base64 of text": _n("echo {s} | base64 -d",
                         lambda r: _b64("hello, this is ordinary text number " + rand(r, DIG, 3))),
    "token type bearer": _n('{{"token_type": "bearer", "expires_in": 36{n}}}'),
    "python getpass": _n('password = getpass.getpass("Password: ")'),
    "python header get": _n('token = request.headers.get("Authorization")'),
    "ts interface": _n("interface Login {{\n  apiKey: string;\n  password?: string;\n}}"),
    "token file flag": _n("vault login --token-file ~/.vault-token-{n}"),
    "sk kebab": _n("pip install sk-learn-tutorial-for-beginners=={n}.0"),
    "jwt-like two parts": _n("eyJhbGciOiJIUzI1NiJ9.payload-{n}"),
}


def _surroundings(snippet: str, keep: str, rng: random.Random) -> dict[str, str]:
    body = f"{snippet}\n{keep}"
    return {
        "raw": f"{body}\n",
        "prompt": f"Hi, can you help with this?\n\n{snippet}\n\nAfter that, {keep}. Thanks!",
        "json": json.dumps({"type": "text", "text": body}),
        "repr": repr({"stdout": body + "\n", "returncode": 0}),
        "env": f"HOME=/home/dev\nSHELL=/bin/zsh\n{snippet}\nLANG=en_US.UTF-8\n{keep}\n",
        "source": f'CONFIG = """\n{snippet}\n"""\nprint("{keep}")\n',
    }


SURROUNDINGS = ("raw", "prompt", "json", "repr", "env", "source")


def corpus(split: str) -> tuple[list[Sample], list[Sample]]:
    """(positives, near misses) of ``split`` (``dev`` or ``test``)."""
    rng = random.Random(SEEDS[split])
    positives: list[Sample] = []
    negatives: list[Sample] = []
    for shape, make in POSITIVE_SHAPES.items():
        for where in SURROUNDINGS:
            snippet, secret = make(rng)
            keep = f"step {rng.randint(100, 999)} finished"
            text = _surroundings(snippet, keep, rng)[where]
            positives.append(Sample(f"{shape}/{where}", shape, where, secret, text, keep))
    for shape, make_miss in NEGATIVE_SHAPES.items():
        for where in SURROUNDINGS:
            snippet = make_miss(rng)
            keep = f"step {rng.randint(100, 999)} finished"
            text = _surroundings(snippet, keep, rng)[where]
            negatives.append(Sample(f"{shape}/{where}", shape, where, "", text, keep))
    return positives, negatives


def outcome(sample: Sample, out: str) -> str:
    """``tp``/``fn`` for a positive (its secret gone, in any escaping), ``tn``/``fp`` for a
    near miss (unchanged); ``damaged`` when a positive's ``keep`` line did not survive."""
    if not sample.secret:
        return "tn" if out == sample.text else "fp"
    forms = {sample.secret, json.dumps(sample.secret)[1:-1], repr(sample.secret)[1:-1]}
    if any(form in out for form in forms):
        return "fn"
    return "tp" if sample.keep in out else "damaged"

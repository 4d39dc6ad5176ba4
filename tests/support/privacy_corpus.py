"""The privacy corpus: credentials the privacy filter must mask, and look-alikes it must leave alone.

Plain data, for any test that plants secrets in transcripts and scans what reaches disk:

    TRUE_CASES   (kind, example_text, secret_value) triples.  ``example_text`` is what a user would
                 paste (the credential, or the credential with the name, header or sentence that
                 makes it one); ``secret_value`` is the part that must not survive: masking removes
                 it whole, so no 12-character piece of it may remain.  ``kind`` is the key the
                 filter counts it under in ``PrivacyReport.secret_kinds``.  One or more cases per
                 provider format (``claude_memory.core.providers``, whose synthetic examples are
                 reused here) and per context rule; every ``secret_value`` has >= 16 characters.
    NEAR_MISSES  texts that look like credentials but are not (hashes, UUIDs, digests, lockfile
                 integrity strings, base64 data, identifiers, placeholders, prose): the filter must
                 return each unchanged.

Every value is synthetic: generated from a fixed hash, or assembled from pieces, so that no
credential-shaped literal sits in the source (GitHub push protection) and no real credential is ever
used.  One deliberate exception: ``AKIAIOSFODNN7EXAMPLE``, the access key id from AWS's own
documentation, is in the real format and IS masked (the filter does not special-case documentation
examples; masking one costs nothing).
"""

from __future__ import annotations

import base64
import hashlib
import re

from claude_memory.core.providers import PROVIDERS, synthetic

__all__ = ["NEAR_MISSES", "TRUE_CASES", "provider_cases"]

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_B64 = _ALNUM + "+/"
_HEX = "0123456789abcdef"


def _fake(alphabet: str, length: int, salt: str) -> str:
    return synthetic(alphabet, length, f"corpus/{salt}")


def provider_cases() -> list[tuple[str, str, str]]:
    """One case per example of every provider format: (kind, example, the secret part of it)."""
    cases = []
    for provider in PROVIDERS:
        for example in provider.examples:
            m = re.fullmatch(provider.pattern, example) if provider.group == 0 else re.search(provider.pattern, example)
            assert m is not None, (provider.kind, provider.pattern)
            cases.append((provider.kind, example, m.group(provider.group)))
    return cases


# -- formats only detect-secrets' pattern lists know, and other fixed formats --------------------
_AWS_SECRET = _fake(_B64, 40, "aws-secret")
_AWS_SECRET_2 = _fake(_B64, 40, "aws-secret-2")
_AWS_ID = "AKIA" + _fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, "aws-id")
_PASSWORD = _fake(_ALNUM, 24, "password")
_RSA_BODY = "\n".join(_fake(_B64, 64, f"rsa{i}") for i in range(6))
_OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n" + "\n".join(_fake(_B64, 70, f"ssh{i}") for i in range(4))
_JWT = (
    base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    + "."
    + base64.urlsafe_b64encode(b'{"sub":"1234567890","role":"service_role","iat":1716239022}').decode().rstrip("=")
    + "."
    + _fake(_ALNUM + "-_", 43, "jwt-sig")
)
_BASIC = base64.b64encode(b"deploy:" + _PASSWORD.encode()).decode()


def _uuid_like(salt: str) -> str:
    h = _fake(_HEX, 32, salt)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_S = "<S>"  # where the secret goes in a template

# (kind, template with <S>, secret)
_OTHER_CASES: list[tuple[str, str, str]] = [
    # AWS: ids, and the secret access key next to its name in every form people paste it
    ("aws", _S, "AKIAIOSFODNN7EXAMPLE"),  # AWS's documented example id: masked like any other
    ("aws", _S, _AWS_ID),
    ("aws", _S, "ASIA" + _fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, "asia")),
    ("assignment", "aws_secret_access_key = <S>", _AWS_SECRET),
    ("assignment", "AWS_SECRET_ACCESS_KEY=<S>", _AWS_SECRET),
    ("assignment", "aws configure set aws_secret_access_key <S>", _AWS_SECRET),
    ("assignment", "AWS Secret Access Key: <S>", _AWS_SECRET_2),
    ("assignment", '{"AccessKeyId": "' + _AWS_ID + '", "SecretAccessKey": "<S>"}', _AWS_SECRET_2),
    ("prose", "my AWS secret key is <S>", _AWS_SECRET),
    ("prose", "The aws secret access key was <S> until I rotated it", _AWS_SECRET_2),
    ("aws", "s3 = boto3.client('s3', aws_secret_key='<S>')", _AWS_SECRET),
    # detect-secrets-only formats
    ("twilio", _S, "SK" + _fake(_HEX, 32, "twilio-sk")),
    ("twilio", _S, "AC" + _fake(_HEX, 32, "twilio-ac")),
    ("sendgrid", _S, "SG." + _fake(_ALNUM + "-_", 22, "sg1") + "." + _fake(_ALNUM + "-_", 43, "sg2")),
    ("mailchimp", _S, _fake(_HEX, 32, "mailchimp") + "-us21"),
    ("gitlab", _S, "GR1348941" + _fake(_ALNUM, 20, "gitlab-runner")),
    ("npm", "//registry.npmjs.org/:_authToken=<S>", _uuid_like("npmrc")),
    # JWTs and private keys
    ("jwt", _S, _JWT),
    ("private_key", "-----BEGIN RSA PRIVATE KEY-----\n<S>\n-----END RSA PRIVATE KEY-----", _RSA_BODY),
    ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n<S>\n-----END OPENSSH PRIVATE KEY-----", _OPENSSH_BODY),
    # passwords in URLs (databases and brokers)
    ("url_password", "postgres://app:<S>@db.internal:5432/app", _PASSWORD),
    ("url_password", "mongodb+srv://admin:<S>@cluster0.ab1cd.mongodb.net/prod?retryWrites=true", _PASSWORD),
    ("url_password", "rediss://:<S>@cache.internal:6380/0", _PASSWORD),
    ("url_password", "amqp://worker:<S>@rabbit.internal:5672/vhost", _PASSWORD),
    ("url_password", "mysql://root:<S>@127.0.0.1:3306/shop", _PASSWORD),
    # HTTP credentials
    ("authorization", "Authorization: Bearer <S>", _PASSWORD),
    ("authorization", 'curl -H "Authorization: Basic <S>" https://api.example.com', _BASIC),
    ("authorization", "Authorization: SSWS <S>", "00" + _fake(_ALNUM, 40, "okta")),
    # key/value pairs whose key names the secret (.env lines, JSON, YAML, headers, flags)
    ("assignment", "DD_API_KEY=<S>", _fake(_HEX, 32, "dd-api")),
    ("assignment", "DD_APP_KEY=<S>", _fake(_HEX, 40, "dd-app")),
    ("assignment", "SECRET_KEY_BASE=<S>", _fake(_HEX, 128, "rails")),
    ("assignment", "export SOME_SERVICE_KEY=<S>", _fake(_ALNUM, 32, "some-service")),
    ("assignment", "export FOO_TOKEN='<S>'", _fake(_ALNUM, 32, "foo-token")),
    ("assignment", '{"apiKey": "<S>"}', _fake(_ALNUM, 32, "json-api-key")),
    ("assignment", '{"accountKey": "<S>"}', _fake(_B64, 86, "account-key") + "=="),
    ("assignment", "api_key: <S>", _fake(_ALNUM, 32, "yaml-api-key")),
    ("assignment", "client_secret=<S>", _fake(_ALNUM + "-_~", 40, "client-secret")),
    ("assignment", "x-api-key: <S>", _fake(_ALNUM, 40, "x-api-key")),
    ("assignment", "Ocp-Apim-Subscription-Key: <S>", _fake(_HEX, 32, "apim")),
    ("assignment", "STRIPE_WEBHOOK_SALT=<S>", _fake(_ALNUM, 24, "salt")),
    ("assignment", "DB_PASSWORD=<S>", _PASSWORD),
    ("cli_flag", "mysql -u root --password <S> shop", _PASSWORD),
    ("assignment", "deploy --api-token=<S>", _fake(_ALNUM, 32, "flag")),
    ("prose", "The staging token for acme-prod is <S>.", _fake(_ALNUM, 32, "prose-token")),
]


TRUE_CASES: list[tuple[str, str, str]] = provider_cases() + [
    (kind, template.replace(_S, secret), secret) for kind, template, secret in _OTHER_CASES
]


def _sha512_integrity(name: str) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(name.encode()).digest()).decode()


def _sha256(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

NEAR_MISSES: list[str] = [
    # hashes, ids, digests
    "commit " + hashlib.sha1(b"c1").hexdigest(),
    f"git checkout {hashlib.sha1(b'c2').hexdigest()[:12]} && git log -1",
    _sha256("bare"),
    "id: 123e4567-e89b-12d3-a456-426614174000",
    "session_id=41ad67da-a93a-4b63-8439-94a356bafe7f status=ok",
    f"ghcr.io/acme/api@sha256:{_sha256('image')}",
    f"FROM python:3.11-slim@sha256:{_sha256('base')}",
    f"oid sha256:{_sha256('lfs')}\nsize 12345",
    f'{{file = "numpy-2.1.3-cp311-cp311-manylinux_x86_64.whl", hash = "sha256:{_sha256("wheel")}"}}',
    f'checksum = "{_sha256("crate")}"',
    "github.com/pkg/errors v0.9.1 h1:" + base64.b64encode(hashlib.sha256(b"go").digest()).decode(),
    # lockfiles
    f'"integrity": "{_sha512_integrity("left-pad@1.3.0")}",',
    f"  integrity {_sha512_integrity('react@18.3.1')}",
    '"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",',
    '"node_modules/@types/node": {"version": "20.14.2", "dev": true}',
    "numpy==1.26.4\npydantic>=2.7,<3\n@anthropic-ai/claude-code@2.1.330",
    # base64 data and test vectors
    f"data:image/png;base64,{_PNG}",
    "SGVsbG8sIFdvcmxkISBUaGlzIGlzIGEgYmFzZTY0IHRlc3QgdmVjdG9yLg==",
    "eyJmb28iOiJiYXIiLCJiYXoiOlsxLDIsM119",
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQC7VJTUt9Us8cKjMzEfYyjiWA4R4 user@laptop",
    # code and config that only names secrets
    'password_field = "password"',
    'PASSWORD_FIELD = "password"',
    'SECRET_KEY = os.environ["SECRET_KEY"]',
    "export API_KEY=$API_KEY",
    "API_KEY: ${{ secrets.API_KEY }}",
    'api_key: str = Field(..., description="API key")',
    "token_count=12345",
    "max_tokens: 4096",
    '"input_tokens": 1234, "output_tokens": 567',
    "SECRET_KEY_LENGTH=64",
    "TOKEN_EXPIRY_SECONDS=3600",
    "CACHE_KEY=user_profile_v2_2024",
    "GITHUB_SHA=" + hashlib.sha1(b"sha").hexdigest(),
    f'cache_key = "{_sha256("cache")[:24]}"',
    f'{{"key": "{_sha256("json-key")[:32]}"}}',
    # identifiers that share a provider's prefix
    "npm_config_cache=/home/user/.npm",
    "pip install scikit-learn  # sk-learn-style-option-names-are-long",
    "hf_hub_download(repo_id='org/model', filename='config.json')",
    "napi_create_function(env, NULL, 0, callback, NULL, &fn)",
    "rnd_state = np.random.RandomState(42)",
    "re_compile_flags = re.IGNORECASE | re.MULTILINE",
    "a key-value store with live_reload_enabled_for_development_servers",
    "st.session_state.counter += 1; pat.match(line); sl.no",
    "AbstractSingletonProxyFactoryBeanDefinitionRegistryPostProcessor",
    "getServiceAccountCredentialsFromEnvironmentVariableOrDefault",
    "MyComponentNameIsVeryLongX1.render.someOtherVeryLongIdentifierHere9",
    "arn:aws:iam::123456789012:role/service-role/MyLambdaExecutionRole",
    "pk.eyJ1IjoiYWNtZSIsImEiOiJja2xtbm9wcXIwMDAxMnFwYmVmZ2hpamtsIn0.AbCdEfGhIjKlMnOpQrStUv",
    "https://github.com/anthropics/claude-code/blob/main/README.md",
    "ssh://git@github.com/acme/repo.git",
    # found in real transcripts by bench/privacy_false_positives.py (../shared fixtures, LongMemEval dev)
    "router.post(url, { params: { _csrf_token: csrfToken } })",
    "payments.init({ applicationId: squareApplicationId, accessToken: squareAccessToken });",
    '$domainAdminPassword = ConvertTo-SecureString "{1}" -AsPlainText -Force',
    "app.secret_key = 'replace_this_with_a_real_secret_key'",
    "DATABASE_URL=postgres://shop:example@localhost/shop\nDEPLOY_TOKEN=changeme",
    "Basic Omelet Recipe: two eggs, salt, butter.",
    # prose
    "Use a bearer token for auth; basic authentication is disabled.",
    "the primary key is " + _sha256("pk")[:24],
    "the commit is " + hashlib.sha1(b"prose").hexdigest(),
    "my token count is 1234567890123456",
    "The key is in the vault; the password is required.",
    "ghp_ tokens start with a prefix, and AKIA keys are AWS access key ids.",
]

"""Tests for the privacy filter, claude_memory.core.privacy, and through it the modules it composes:
private_sections, secrets (the rule table) and masking (SEED_SPEC §7)."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from claude_memory.core.privacy import PrivacyFilter, PrivacyReport, PrivacySettings

ALL_FORMATS = ("xml", "bracket", "comment")
DEFAULT = PrivacyFilter()
ALL = PrivacyFilter(PrivacySettings(private_formats=ALL_FORMATS))


def run(text: str, flt: PrivacyFilter = DEFAULT) -> str:
    return flt.filter(text)[0]


# --------------------------------------------------------------------------------------------
# Private sections
# --------------------------------------------------------------------------------------------


def test_basic_removal() -> None:
    out, report = DEFAULT.filter("before <private>secret</private> after")
    assert out == "before [PRIVATE] after"
    assert report.private_sections == 1
    assert report.unclosed_private_tags is False
    assert report.original_length == len("before <private>secret</private> after")
    assert report.filtered_length == len(out)


def test_multiline_and_case_insensitive() -> None:
    out, report = DEFAULT.filter("a\n<PRIVATE>line one\nline two\n</Private>\nb")
    assert out == "a\n[PRIVATE]\nb"
    assert "line" not in out
    assert report.private_sections == 1


def test_non_greedy_keeps_text_between_sections() -> None:
    out = run("<private>x</private> keep me <private>y</private>")
    assert out == "[PRIVATE] keep me [PRIVATE]"


def test_empty_and_whitespace_sections_removed_without_marker() -> None:
    assert run("text <private></private> more") == "text  more"
    out, report = DEFAULT.filter("text <private> \n\t </private> more")
    assert out == "text  more"
    assert report.private_sections == 1


def test_fenced_code_block_protected() -> None:
    text = "see:\n```html\n<private>literal</private>\n```\nend <private>gone</private>"
    out, report = DEFAULT.filter(text)
    assert out == "see:\n```html\n<private>literal</private>\n```\nend [PRIVATE]"
    assert report.private_sections == 1


def test_inline_code_protected() -> None:
    out = run("use `<private>x</private>` to hide; <private>hidden</private>")
    assert out == "use `<private>x</private>` to hide; [PRIVATE]"


def test_code_placeholder_cannot_collide_with_text() -> None:
    # text that already contains private-use characters and digit sequences like placeholders
    text = "\ue000" + "0" + "\ue000 `code` <private>x</private> \ue0010\ue001"
    out = run(text)
    assert out == "\ue0000\ue000 `code` [PRIVATE] \ue0010\ue001"


def test_code_inside_private_section_is_removed() -> None:
    assert run("<private>a `b` c ```d```</private>!") == "[PRIVATE]!"


def test_unclosed_tag_kept_and_flagged() -> None:
    text = "open <private> never closed, my secret stays"
    out, report = DEFAULT.filter(text)
    assert out == text
    assert report.unclosed_private_tags is True
    assert report.private_sections == 0


def test_unclosed_outer_tag_does_not_hide_closed_inner_section() -> None:
    out, report = DEFAULT.filter("<private>a<private>b</private>c")
    assert out == "<private>a[PRIVATE]c"
    assert report.unclosed_private_tags is True
    assert report.private_sections == 1


def test_nested_sections_removed_as_a_whole() -> None:
    out, report = DEFAULT.filter("<private>a<private>b</private>c</private>d")
    assert out == "[PRIVATE]d"
    assert report.private_sections == 1
    assert report.unclosed_private_tags is False


def test_stray_closing_tag_flagged() -> None:
    out, report = DEFAULT.filter("x</private> y")
    assert out == "x</private> y"
    assert report.unclosed_private_tags is True


@pytest.mark.parametrize(
    "text",
    ["<private\n>x</private>", "< private>x</private>", "<priv ate>x</priv ate>", "<private x>x</private>"],
)
def test_strict_tags_only(text: str) -> None:
    out, report = DEFAULT.filter(text)
    assert "[PRIVATE]" not in out
    assert report.private_sections == 0


def test_bracket_format_only_when_enabled() -> None:
    text = "a [private]b[/private] c"
    assert run(text) == text
    bracket = PrivacyFilter(PrivacySettings(private_formats=("bracket",)))
    assert run(text, bracket) == "a [PRIVATE] c"
    assert run("a <private>b</private>", bracket) == "a <private>b</private>"


def test_comment_format_only_when_enabled() -> None:
    text = "a <!-- private -->b<!--/private--> c"
    assert run(text) == text
    comment = PrivacyFilter(PrivacySettings(private_formats=("comment",)))
    assert run(text, comment) == "a [PRIVATE] c"
    assert run("a <!--\n  PRIVATE\n-->b<!-- /private --> c", comment) == "a [PRIVATE] c"


def test_all_formats_together() -> None:
    out, report = ALL.filter("1 <private>a</private> 2 [private]b[/private] 3 <!-- private -->c<!-- /private -->")
    assert out == "1 [PRIVATE] 2 [PRIVATE] 3 [PRIVATE]"
    assert report.private_sections == 3


def test_bracket_marker_is_not_reparsed_as_tag() -> None:
    out, report = ALL.filter("[private]a[/private] and [private]b[/private]")
    assert out == "[PRIVATE] and [PRIVATE]"
    assert report.unclosed_private_tags is False


def test_unknown_format_rejected() -> None:
    with pytest.raises(ValueError, match="unknown private format"):
        PrivacyFilter(PrivacySettings(private_formats=("yaml",)))


@pytest.mark.parametrize(
    ("marker", "expected"),
    [("[PRIVATE]", "x [PRIVATE] y"), ("[REDACTED]", "x [REDACTED] y"), ("", "x  y")],
)
def test_marker_variants(marker: str, expected: str) -> None:
    flt = PrivacyFilter(PrivacySettings(marker=marker))
    out, report = flt.filter("x <private>hidden</private> y")
    assert out == expected
    assert report.private_sections == 1


def test_consecutive_markers_collapse() -> None:
    out, report = DEFAULT.filter("<private>a</private> <private>b</private>\n<private>c</private> tail")
    assert out == "[PRIVATE] tail"
    assert report.private_sections == 3


def test_consecutive_secret_markers_collapse_on_one_line_only() -> None:
    tok1 = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
    tok2 = "ghp_" + "Z9y8X7w6" * 4 + "V5u4"
    out, report = DEFAULT.filter(f"{tok1} {tok2}\n{tok1}")
    assert out == "[REDACTED]\n[REDACTED]"
    assert report.secrets_masked == 3


def test_preserve_line_count() -> None:
    text = "a\n<private>one\ntwo\nthree</private>\nb\n<private>x\ny</private><private>\n</private>z"
    keep = PrivacyFilter(PrivacySettings(preserve_line_count=True))
    out = run(text, keep)
    assert out.count("\n") == text.count("\n")
    assert out.startswith("a\n[PRIVATE]\n\n\nb")
    collapsed = run(text)
    assert collapsed.count("\n") < text.count("\n")
    assert collapsed == "a\n[PRIVATE]\nb\n[PRIVATE]z"


def test_preserve_line_count_for_masked_pem_block() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234\nabcd==\n-----END RSA PRIVATE KEY-----"
    keep = PrivacyFilter(PrivacySettings(preserve_line_count=True))
    out = run(f"k:\n{pem}\nend", keep)
    assert out == "k:\n[REDACTED]\n\n\n\nend"


def test_removal_that_forms_a_new_tag_is_repeated() -> None:
    # removing the inner empty section joins "<priv" + "ate>" into a new opening tag
    out, report = DEFAULT.filter("<priv<private></private>ate>hidden</private>")
    assert out == "[PRIVATE]"
    assert report.private_sections == 2


# --------------------------------------------------------------------------------------------
# Credentials
# --------------------------------------------------------------------------------------------

GH = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6"  # 36 after the prefix
CASES_WHOLE = {
    "aws_access_key_id": "AKIAIOSFODNN7EXAMPLE",
    "github_ghp": GH,
    "github_gho": "gho_" + GH[4:],
    "github_ghu": "ghu_" + GH[4:],
    "github_ghs": "ghs_" + GH[4:],
    "github_ghr": "ghr_" + GH[4:],
    "github_pat": "github_pat_11ABCDEFG0aBcDeFgHiJkLmN_OpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxYZ",
    "gitlab": "glpat-aB3dE6gH9jK2mN5pQ8sT",
    "openai": "sk-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2qR5tU8",
    "openai_proj": "sk-proj-aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2qR5tU8wX1zA4",
    "openai_legacy_ds": "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",
    "anthropic": "sk-ant-api03-aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2qR5tU8-wX1zA4AA",
    "google": "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "slack_bot": "xoxb-123456789012-1234567890123-aB3dE6gH9jK2mN5pQ8sT1vW4",
    "slack_user": "xoxp-123456789012-1234567890123-1234567890123-0123456789abcdef0123456789abcdef",
    "slack_app": "xapp-1-A0123456789-1234567890123-0123456789abcdef",
    "stripe_live": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe_restricted": "rk_live_" + "51H8aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2",
    "stripe_test": "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "npm": "npm_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6",
    "pypi": "pypi-AgEIcHlwaS5vcmc" + "CJDQ2YzE3NzM4LWQ5ZTAtNDlmNC1hYTk5LTgyNjQ5Nzc1ZTcwMQACKlszLCJkNmY0ZDY0Zi1l",
    "sendgrid": "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",
    "twilio_sid": "AC" + "0123456789abcdef0123456789abcdef",
    "twilio_key": "SK" + "0123456789abcdef0123456789abcdef",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    "telegram": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
    "square": "sq0csp-" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hI6kL9nO2q",
    "mailchimp": "0123456789abcdef0123456789abcdef-us12",
    "slack_webhook": "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
}


@pytest.mark.parametrize("name", sorted(CASES_WHOLE))
def test_token_families_masked(name: str) -> None:
    secret = CASES_WHOLE[name]
    out, report = DEFAULT.filter(f"here: {secret} (done)")
    assert secret not in out
    assert out == "here: [REDACTED] (done)"
    assert report.secrets_masked == 1


@pytest.mark.parametrize("name", sorted(CASES_WHOLE))
def test_token_families_masked_inside_code_blocks(name: str) -> None:
    secret = CASES_WHOLE[name]
    out = run(f"```bash\ncurl -d '{secret}' x\n```\nand `{secret}`")
    assert secret not in out
    assert out == "```bash\ncurl -d '[REDACTED]' x\n```\nand `[REDACTED]`"


def test_token_glued_to_other_text_is_not_a_token() -> None:
    # left/right boundaries: part of a longer identifier or blob
    for text in ("xAKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLEXYZ", "task-aB3dE6gH9jK2mN5pQ8sT1vW4yZ7"):
        assert run(text) == text


def test_aws_secret_key_assignment() -> None:
    text = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"
    out, report = DEFAULT.filter(text)
    assert out == "aws_secret_access_key = [REDACTED]\nAWS_ACCESS_KEY_ID=[REDACTED]"
    assert report.secrets_masked == 2


def test_aws_quoted_secret_detect_secrets_pattern() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    out = run(f'client(aws_key_for_prod="{secret}")')
    assert secret not in out
    assert "aws_key_for_prod=" in out


@pytest.mark.parametrize(
    "pem_kind", ["RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "DSA PRIVATE KEY",
                 "ENCRYPTED PRIVATE KEY", "PRIVATE KEY", "PGP PRIVATE KEY BLOCK"],
)  # fmt: skip
def test_pem_private_key_block_masked_whole(pem_kind: str) -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1G\n"
    block = f"-----BEGIN {pem_kind}-----\n{body}-----END {pem_kind}-----"
    out, report = DEFAULT.filter(f"key:\n{block}\ndone")
    assert out == "key:\n[REDACTED]\ndone"
    assert "MIIE" not in out and "BEGIN" not in out
    assert report.secrets_masked == 1


def test_every_detect_secrets_private_key_header_masked() -> None:
    from detect_secrets.plugins.private_key import PrivateKeyDetector

    headers = [p.pattern for p in PrivateKeyDetector.denylist if p.pattern.startswith("BEGIN")]
    assert len(headers) >= 6
    for header in headers:
        kind = header.removeprefix("BEGIN ")
        dashes = "----" if "SSH2" in header else "-----"
        sp = " " if "SSH2" in header else ""
        body = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY"
        block = f"{dashes}{sp}{header}{sp}{dashes}\n{body}\n{dashes}{sp}END {kind}{sp}{dashes}"
        out = run(f"x {block} y")
        assert out == "x [REDACTED] y", header


def test_putty_private_lines_masked() -> None:
    ppk = (
        "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: me\nPublic-Lines: 1\n"
        "AAAAB3NzaC1yc2EAAAABJQAAAQEA\nPrivate-Lines: 2\nAAABAQCSecretLine1xyz\nAAAAgQDSecretLine2\n"
        "Private-MAC: 0123456789abcdef0123456789abcdef01234567\n"
    )
    out = run(ppk)
    assert "SecretLine" not in out and "0123456789abcdef0123" not in out
    assert "PuTTY-User-Key-File-2: ssh-rsa" in out and "AAAAB3NzaC1yc2EAAAABJQAAAQEA" in out


def test_pem_block_in_json_escaped_string_and_truncated() -> None:
    escaped = (
        '{"content": "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEAabcdefghij'
        '\\nklmnopqrstuvwxyz0123\\n-----END RSA PRIVATE KEY-----\\n"}'
    )
    assert run(escaped) == '{"content": "[REDACTED]\\n"}'
    truncated = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAABAAABFwAAAAdzc2gtcn\n"
    )
    out = run(truncated)
    assert "b3Blbn" not in out and "AAAAAAAB" not in out
    assert out.startswith("[REDACTED]")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcdef1234567890", "Authorization: Bearer [REDACTED]"),
        ('curl -H "authorization: bearer abc.def-123456"', 'curl -H "authorization: bearer [REDACTED]"'),
        ('{"Authorization": "Bearer eyJz.abc123def456"}', '{"Authorization": "Bearer [REDACTED]"}'),
        ("token is: bearer a1B2c3D4e5F6g7H8", "token is: bearer [REDACTED]"),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"),
        ("auth = basic dXNlcjpwYXNzd29yZA==", "auth = basic [REDACTED]"),
        ("Proxy-Authorization: token 0123456789abcdef", "Proxy-Authorization: token [REDACTED]"),
    ],
)
def test_http_credentials(text: str, expected: str) -> None:
    assert run(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgres://admin:s3cretpw@db:5432/app", "postgres://admin:[REDACTED]@db:5432/app"),
        ("redis://:hunter2pw@cache:6379", "redis://:[REDACTED]@cache:6379"),
        (
            "https://deploy:gh-Pass_99@git.example.com/x.git",
            "https://deploy:[REDACTED]@git.example.com/x.git",
        ),
    ],
)
def test_password_in_url(text: str, expected: str) -> None:
    assert run(text) == expected


def test_password_in_url_masks_only_the_password() -> None:
    out = run("mysql://root:Tr0ub4dor@localhost/db")
    assert out == "mysql://root:[REDACTED]@localhost/db"
    assert "root" in out and "localhost" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=secret123", "password=[REDACTED]"),
        ("DB_PASSWORD=hunter22", "DB_PASSWORD=[REDACTED]"),
        ('export API_KEY="abcd1234efgh"', 'export API_KEY="[REDACTED]"'),
        ("export GITHUB_TOKEN='t0k3n-value'", "export GITHUB_TOKEN='[REDACTED]'"),
        (
            '{"password": "hunter22", "apiKey": "k3y-v4lue"}',
            '{"password": "[REDACTED]", "apiKey": "[REDACTED]"}',
        ),
        ("password: correcthorse\nuser: me", "password: [REDACTED]\nuser: me"),
        ('client_secret: "s3cr3t value"', 'client_secret: "[REDACTED]"'),
        ("x-api-key: abcd1234", "x-api-key: [REDACTED]"),
        ("SECRET_KEY = 'django-insecure-abc'", "SECRET_KEY = '[REDACTED]'"),
        ("access_token=abc123def456&x=1", "access_token=[REDACTED]&x=1"),
        ("passwd=letmein1", "passwd=[REDACTED]"),
        ("pwd: 12345678", "pwd: [REDACTED]"),
        ("private_key => 'abcdefgh'", "private_key => '[REDACTED]'"),
        ("auth: s3cr3tauth", "auth: [REDACTED]"),
        ("credentials=user1:pass1", "credentials=[REDACTED]"),
        ("AWS_ACCESS_KEY=abcd1234", "AWS_ACCESS_KEY=[REDACTED]"),
        ("if password == 'letmein1':", "if password == '[REDACTED]':"),
        ('{\\"password\\": \\"hunter22\\"}', '{\\"password\\": \\"[REDACTED]\\"}'),
        ("mysql --password hunter22 -u root", "mysql --password [REDACTED] -u root"),
        ("cli --api-key=abcd1234", "cli --api-key=[REDACTED]"),
    ],
)
def test_key_value_assignments_mask_value_keep_key(text: str, expected: str) -> None:
    out, report = DEFAULT.filter(text)
    assert out == expected
    assert report.secrets_masked >= 1


def test_secret_assignment_inside_code_block_masked() -> None:
    text = "```\nAPI_KEY=abcd1234\npassword = 'hunter22'\n```"
    assert run(text) == "```\nAPI_KEY=[REDACTED]\npassword = '[REDACTED]'\n```"


@pytest.mark.parametrize(
    "text",
    [
        "def login(password: str) -> None:",
        "password: Optional[str] = None",
        "token = None",
        "token: str | None = None",
        "secret = get_secret()",
        "api_key = os.environ['API_KEY']",
        "password=${PASSWORD}",
        "password=$PASSWORD",
        'PASSWORD="${DB_PASSWORD}"',
        "token: {{ secrets.TOKEN }}",
        "api_key=<your-api-key>",
        "pwd=abc",
        "password=",
        "password: ***",
        "token=self.token",
        "client(api_key=api_key)",
        "login(password=args.password)",
        "PWD=/home/user/project",
        '"input_tokens": 1234, "output_tokens": 567',
        "max_tokens=4096",
        "token_count: 1500",
        "author: Jane Doe",
        "OAuth: enabled",
        "use a bearer token for auth",
        "basic authentication is enabled",
        "Authorization: Bearer $TOKEN",
        "https://user:${PASS}@host/x",
        "the keyboard: a monkey typed it",
        "sk-learn-style-option-names-are-long",
        "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "id: 123e4567-e89b-12d3-a456-426614174000",
        "commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
        "if token == self.eof:",
        'if token == "lambda":',
        "cache_token = current_token",
        "self.user, self.password = user, password",
        "SERVER_AUTH = '1.3.6.1.5.5.7.3.1'",
        'raise TypeError("pwd: expected bytes, got %s" % type(pwd).__name__)',
        "authorization = authorization[1].encode('ascii')",
        "credentials = '{0}:{1}'.format(user, passwd)",
        "ctx.load_cert_chain(CERTFILE, password=KEY_PASSWORD)",
        "auth: AuthType",
        "'Credential=' + access_key + '/' + scope",
        "#   access_key: access_key_id",
        "Token: '#ffffff',",
        "# Whether *value* is a claim token: exactly 32 lowercase hex digits.",
    ],
)
def test_false_positives_not_masked(text: str) -> None:
    out, report = DEFAULT.filter(text)
    assert out == text
    assert report.secrets_masked == 0


def test_secret_marker_configurable() -> None:
    flt = PrivacyFilter(PrivacySettings(secret_marker="***"))
    assert run("password=hunter22 and " + GH, flt) == "password=*** and ***"


# --------------------------------------------------------------------------------------------
# Custom patterns
# --------------------------------------------------------------------------------------------


def test_custom_patterns_and_invalid_pattern() -> None:
    flt = PrivacyFilter(PrivacySettings(custom_patterns=(r"ACME-\d{6}", r"(unclosed", r"internal\.example\.com")))
    assert flt.invalid_patterns == ("(unclosed",)
    out, report = flt.filter("ticket ACME-123456 on internal.example.com, not ACME-12")
    assert out == "ticket [REDACTED] on [REDACTED], not ACME-12"
    assert report.secrets_masked == 2


def test_custom_pattern_applied_after_builtins_and_never_inside_markers() -> None:
    flt = PrivacyFilter(PrivacySettings(custom_patterns=("RED", "x*")))
    out, report = flt.filter("password=hunter22 and RED")
    assert out == "password=[REDACTED] and [REDACTED]"  # the marker's own "RED" is left alone
    assert report.secrets_masked == 2  # the empty-match pattern "x*" masks nothing


def test_custom_patterns_counted_and_collapsed() -> None:
    flt = PrivacyFilter(PrivacySettings(custom_patterns=(r"\bfoo\d\b",)))
    out, report = flt.filter("foo1 foo2 bar")
    assert out == "[REDACTED] bar"
    assert report.secrets_masked == 2


# --------------------------------------------------------------------------------------------
# filter_value and report
# --------------------------------------------------------------------------------------------


def test_filter_value_nested_tool_input() -> None:
    tool_input = {
        "command": f"git push https://bot:Sup3rS3cret@github.com/x.git && echo {GH}",
        "env": {
            "API_KEY": "plain",
            "notes": ["<private>home address</private>", ("tuple", "password=hunter22")],
        },
        "timeout": 120,
        "flag": True,
        "none": None,
        "<private>key</private>": "value",
    }
    report = PrivacyReport()
    out = DEFAULT.filter_value(tool_input, report)
    assert isinstance(out, dict)
    assert out["command"] == "git push https://bot:[REDACTED]@github.com/x.git && echo [REDACTED]"
    assert out["env"] == {"API_KEY": "plain", "notes": ["[PRIVATE]", ("tuple", "password=[REDACTED]")]}
    assert out["timeout"] == 120 and out["flag"] is True and out["none"] is None
    assert "[PRIVATE]" in out and out["[PRIVATE]"] == "value"
    assert report.private_sections == 2
    assert report.secrets_masked == 3
    assert tool_input["timeout"] == 120 and "<private>key</private>" in tool_input  # input untouched
    assert report.original_length > report.filtered_length > 0


def test_report_merge() -> None:
    a = PrivacyReport(
        private_sections=1,
        secrets_masked=2,
        unclosed_private_tags=False,
        original_length=10,
        filtered_length=5,
        kinds={"github": 1, "assignment": 1},
    )
    b = PrivacyReport(
        private_sections=3,
        secrets_masked=4,
        unclosed_private_tags=True,
        original_length=7,
        filtered_length=7,
        kinds={"assignment": 3, "aws": 1},
    )
    a.merge(b)
    assert a == PrivacyReport(
        private_sections=4,
        secrets_masked=6,
        unclosed_private_tags=True,
        original_length=17,
        filtered_length=12,
        kinds={"github": 1, "assignment": 4, "aws": 1},
    )
    assert a.as_metadata() == {
        "private_sections": 4,
        "secrets_masked": 6,
        "unclosed_private_tags": True,
        "original_length": 17,
        "filtered_length": 12,
        "secret_kinds": {"assignment": 4, "aws": 1, "github": 1},
    }
    assert b.kinds == {"assignment": 3, "aws": 1}  # merge does not share the other's dict


def test_report_metadata_has_secret_kinds_only_when_something_was_masked() -> None:
    _, clean = DEFAULT.filter("nothing to hide here, just prose")
    assert "secret_kinds" not in clean.as_metadata()
    assert clean.kinds == {}
    _, report = DEFAULT.filter(f"password=hunter22 and {GH} and {GH[:4]}{GH[5:]}x")
    assert report.as_metadata()["secret_kinds"] == {"assignment": 1, "github": 2}
    assert report.secrets_masked == sum(report.kinds.values()) == 3


def test_custom_patterns_counted_under_kind_custom() -> None:
    flt = PrivacyFilter(PrivacySettings(custom_patterns=(r"ACME-\d{6}",)))
    _, report = flt.filter(f"ticket ACME-123456 and ACME-654321, token {GH}")
    assert report.kinds == {"custom": 2, "github": 1}
    assert report.secrets_masked == 3


def test_report_never_contains_content() -> None:
    secret = "hunter22-Sup3rS3cret"
    private = "my-home-address-42"
    text = f"password={secret} <private>{private}</private> {GH} <private>unclosed {private}"
    out, report = DEFAULT.filter(text)
    assert secret not in out and GH not in out
    for blob in (repr(report), str(report.as_metadata())):
        assert secret not in blob
        assert private not in blob
        assert GH not in blob
        assert "hunter" not in blob
    metadata = report.as_metadata()
    kinds = metadata.pop("secret_kinds")
    assert all(isinstance(v, int | bool) for v in metadata.values())
    assert isinstance(kinds, dict) and kinds == {"assignment": 1, "github": 1}
    assert all(re.fullmatch(r"[a-z0-9_]+", k) and isinstance(v, int) for k, v in kinds.items())


def test_errors_do_not_quote_content() -> None:
    with pytest.raises(TypeError) as exc:
        DEFAULT.filter(b"password=hunter22")  # type: ignore[arg-type]
    assert "hunter22" not in str(exc.value)


def test_non_ascii_text_whose_lowercase_changes_length() -> None:
    # "İ".lower() is two code points: the case-insensitive fallbacks must keep offsets right
    text = "İstanbul PASSWORD=hunter22 <PRIVATE>x</PRIVATE> Bearer abc123def456 İ"
    out = run(text)
    assert out == "İstanbul PASSWORD=[REDACTED] [PRIVATE] Bearer [REDACTED] İ"


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

_SAFE_WORDS = st.from_regex(r"[a-z0-9]{1,12}", fullmatch=True)
_SEPARATORS = st.sampled_from([" ", "  ", "\n", ", ", ". ", "(", ")", "!", "?", "'", '"', "\t"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_SAFE_WORDS, _SEPARATORS), max_size=60))
def test_plain_text_unchanged(parts: list[tuple[str, str]]) -> None:
    text = "".join(w + s for w, s in parts)
    assume("bearer" not in text and "basic" not in text)
    out, report = ALL.filter(text)
    assert out == text
    assert report.secrets_masked == 0 and report.private_sections == 0
    assert report.original_length == report.filtered_length == len(text)


_FRAGMENTS = [
    "<private>", "</private>", "<PRIVATE>", "[private]", "[/private]", "<!-- private -->",
    "<!-- /private -->", "<priv", "ate>", "<", ">", "[", "]", "`", "```", "\n", " ", "a", "Z",
    "password=", "token: ", "hunter22", "$X", "=", ":", "[PRIVATE]", "[REDACTED]", "@", "://",
    "u:p4ssw0rd@h", "Bearer ", "abc123def456", GH, "AKIAIOSFODNN7EXAMPLE", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA1234", '"', "'", "--token ", "İ", "\ue000", "0",
]  # fmt: skip


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=5)), max_size=30),
    st.sampled_from(["[PRIVATE]", "[REDACTED]", ""]),
    st.booleans(),
)
def test_filter_is_idempotent(parts: list[str], marker: str, preserve: bool) -> None:
    formats = ("xml", "comment") if marker == "[PRIVATE]" else ALL_FORMATS
    flt = PrivacyFilter(PrivacySettings(private_formats=formats, marker=marker, preserve_line_count=preserve))
    text = "".join(parts)
    once, _ = flt.filter(text)
    twice, report = flt.filter(once)
    assert twice == once
    assert report.private_sections == 0


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30))
def test_preserve_line_count_property(parts: list[str]) -> None:
    flt = PrivacyFilter(PrivacySettings(private_formats=ALL_FORMATS, preserve_line_count=True))
    text = "".join(parts)
    out, report = flt.filter(text)
    assert out.count("\n") == text.count("\n")
    assert report.filtered_length == len(out)


@settings(max_examples=200)
@given(st.text(alphabet=string.ascii_letters + string.digits, min_size=8, max_size=40))
def test_private_content_never_survives(secret: str) -> None:
    assume(not re.search("private", secret, re.IGNORECASE))
    out, report = DEFAULT.filter(f"before <private>{secret}</private> after")
    assert secret not in out
    assert out == "before [PRIVATE] after"
    # the report holds nothing but its five counters/flags
    assert repr(report) == repr(PrivacyReport(**report.as_metadata()))  # type: ignore[arg-type]


_SHORT_ALPHABET = string.ascii_letters + string.digits + "=:_-<>[]/ !'\"`"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_SHORT_ALPHABET, max_size=7))
def test_short_text_fast_path_agrees_with_the_full_rules(text: str) -> None:
    """filter() skips texts under 8 characters; the full rules must leave every such text unchanged."""
    f = PrivacyFilter(PrivacySettings(private_formats=("xml", "bracket", "comment")))
    report = PrivacyReport()
    assert f._secrets(f._private(text, report, ""), report, "") == text
    assert report.secrets_masked == 0 and report.private_sections == 0


def test_short_text_still_goes_through_custom_patterns() -> None:
    f = PrivacyFilter(PrivacySettings(custom_patterns=(r"\d{4}",)))
    assert f.filter("pin 1234")[0] == "pin [REDACTED]"
    assert f.filter("1234")[0] == "[REDACTED]"

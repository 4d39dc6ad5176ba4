"""Credential formats with a distinctive literal, as data: one ``Provider`` per format (SEED_SPEC §7.2).

Each entry names the provider (``kind``: the stable short name the privacy report counts masked
secrets under), the pattern, the anchors that gate it, one or more synthetic examples in the real
format, and an optional value check.  ``claude_memory.core.secrets`` compiles the entries into rules
and ``claude_memory.core.masking`` applies them; the tests and the privacy corpus
(``tests/support/privacy_corpus.py``) use the examples.  Pure: no I/O, no module-level mutable state.

The formats were collected from the public documentation of the providers and of the public secret
scanners (gitleaks, TruffleHog, GitHub secret scanning); the patterns are written here.  They are
deliberately a little wider than the documented lengths where a provider has changed its lengths
before, and narrower (exact lengths, a fixed character set, a value check) where the literal alone is
short or common.

Writing an entry (see also ``claude_memory.core.secrets``):
    * ``token=True`` (the default): the pattern runs only on runs of >= 20 token characters
      (``[A-Za-z0-9_\\-+/=.:%~]``), must not be preceded by ``[A-Za-z0-9_]`` and must not be
      followed by ``[A-Za-z0-9_]``.  Its ``anchors`` are literals that start a word (a maximal
      ``[A-Za-z0-9_]`` sequence) wherever the pattern matches, or separators followed by the
      start of a word (``":AA"``, ``".atlasv1."``); the masking looks them up by the first two
      characters of that word, so a hundred formats cost about as much as a few.  An entry whose
      literal sits inside a word (Entra ID client secrets ``…8Q~…``, New Relic license keys
      ``…NRAL``) sets ``inner=True``: its anchors are then searched anywhere in the runs.
    * ``token=False``: the pattern runs on the whole text (case-sensitive) when one of its
      anchors occurs in the lower-cased text; for formats with characters outside the token runs
      (``$``, quotes).
    * ``group``: 0 masks the whole match, 1 only the first group (the secret inside a connection
      string or URL).
    * ``check``: ``"random"`` (the value has a digit and a letter), ``"mixed"`` (two of digits,
      upper and lower case), ``"strong"`` (all three), ``"discord"`` (the first part is a
      base64-encoded numeric user id), or ``""``.  Used where the literal could start an ordinary
      identifier.
    * lengths are bounded (``{20,256}``, not ``{20,}``): a candidate that a check rejects is
      rescanned from its next character, so an unbounded body makes a long run quadratic.
    * every example matches its pattern (``fullmatch`` for ``group=0``) and its secret part has at
      least 16 characters; the examples are generated from a fixed hash (:func:`synthetic`), never real
      credentials, and built at import so that no credential-shaped literal sits in the source.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Literal

__all__ = ["PROVIDERS", "Check", "Provider", "synthetic"]

Check = Literal["", "random", "mixed", "strong", "discord"]


@dataclass(frozen=True)
class Provider:
    kind: str  # stable short provider name, reported in ``PrivacyReport.secret_kinds``
    pattern: str  # regular expression source
    anchors: tuple[str, ...]  # literals without which the pattern cannot match (see the module docstring)
    examples: tuple[str, ...]  # synthetic, in the real format
    check: Check = ""
    group: int = 0  # 0: mask the whole match; 1: mask group 1
    token: bool = True  # matched inside token runs (else: on the whole text)
    inner: bool = False  # (token entries) the anchors may occur inside a word


# -- synthetic examples -------------------------------------------------------------------------
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
HEX = "0123456789abcdef"
LETTERS = UPPER + LOWER
ALNUM = UPPER + LOWER + DIGITS
LOWALNUM = LOWER + DIGITS
UPALNUM = UPPER + DIGITS
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"

Piece = str | tuple[str, int]


def synthetic(alphabet: str, length: int, salt: str) -> str:
    """``length`` characters of ``alphabet``, fixed by a hash of ``salt``: synthetic, never a real credential."""
    data = b""
    counter = 0
    while len(data) < length:
        data += hashlib.sha256(f"{salt}/{counter}".encode()).digest()
        counter += 1
    return "".join(alphabet[byte % len(alphabet)] for byte in data[:length])


def _x(*pieces: Piece) -> str:
    """An example from literal pieces and (alphabet, length) pieces filled by :func:`synthetic`."""
    salt = "".join(p for p in pieces if isinstance(p, str)) or "x"
    return "".join(p if isinstance(p, str) else synthetic(p[0], p[1], f"{salt}#{i}") for i, p in enumerate(pieces))


def _user_id(snowflake: int) -> str:
    """The first part of a Discord bot token: the bot's numeric user id, base64 without padding."""
    return base64.b64encode(str(snowflake).encode()).decode().rstrip("=")


def _uuid(salt: str) -> str:
    h = synthetic(HEX, 32, salt)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_P = Provider

# Order matters where two entries can match the same text: a masked span is counted under the kind of
# the first entry that matched it, so specific formats come before general ones (``sk-ant-`` before
# ``sk-``).
PROVIDERS: tuple[Provider, ...] = (
    # -- AI providers -----------------------------------------------------------------------------
    _P("anthropic", r"sk-ant-[A-Za-z0-9_\-]{20,256}", ("sk-ant-",),
       (_x("sk-ant-api03-", (URLSAFE, 93), "AA"), _x("sk-ant-admin01-", (URLSAFE, 93), "AA"))),
    _P("openrouter", r"sk-or-v1-[0-9a-f]{64}", ("sk-or-v1-",), (_x("sk-or-v1-", (HEX, 64)),)),
    _P("openai", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,512}", ("sk-proj-", "sk-svcacct-", "sk-admin-"),
       (_x("sk-proj-", (URLSAFE, 74), "T3BlbkFJ", (URLSAFE, 74)),
        _x("sk-svcacct-", (URLSAFE, 58), "T3BlbkFJ", (URLSAFE, 58)))),
    # ``sk-`` and 20+ characters: OpenAI's older keys and the OpenAI-compatible APIs (DeepSeek, Moonshot …)
    _P("openai", r"sk-[A-Za-z0-9_\-]{20,256}", ("sk-",),
       (_x("sk-", (ALNUM, 20), "T3BlbkFJ", (ALNUM, 20)), _x("sk-", (HEX, 32))), "random"),
    _P("huggingface", r"hf_[A-Za-z0-9]{30,40}", ("hf_",), (_x("hf_", (LETTERS, 34)),), "mixed"),
    _P("huggingface", r"api_org_[A-Za-z0-9]{30,40}", ("api_org_",), (_x("api_org_", (LETTERS, 34)),), "mixed"),
    _P("replicate", r"r8_[A-Za-z0-9_\-]{37}", ("r8_",), (_x("r8_", (ALNUM, 37)),), "mixed"),
    _P("groq", r"gsk_[A-Za-z0-9]{52}", ("gsk_",), (_x("gsk_", (ALNUM, 52)),), "mixed"),
    _P("perplexity", r"pplx-[A-Za-z0-9]{40,56}", ("pplx-",), (_x("pplx-", (ALNUM, 48)),), "mixed"),
    _P("xai", r"xai-[A-Za-z0-9_]{70,90}", ("xai-",), (_x("xai-", (ALNUM, 80)),), "mixed"),
    _P("fireworks", r"fw_[A-Za-z0-9]{20,44}", ("fw_",), (_x("fw_", (ALNUM, 24)),), "random"),
    _P("cerebras", r"csk-[A-Za-z0-9]{32,48}", ("csk-",), (_x("csk-", (LOWALNUM, 48)),), "random"),
    _P("firecrawl", r"fc-[0-9a-f]{32}", ("fc-",), (_x("fc-", (HEX, 32)),), "random"),
    _P("tavily", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", ("tvly-",), (_x("tvly-dev-", (ALNUM, 32)),), "mixed"),
    _P("elevenlabs", r"sk_[0-9a-f]{48}", ("sk_",), (_x("sk_", (HEX, 48)),), "random"),
    _P("runwayml", r"key_[0-9a-f]{128}", ("key_",), (_x("key_", (HEX, 128)),), "random"),
    _P("langsmith", r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}", ("lsv2_",),
       (_x("lsv2_pt_", (HEX, 32), "_", (HEX, 10)), _x("lsv2_sk_", (HEX, 32), "_", (HEX, 10)))),
    _P("pinecone", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,80}", ("pcsk_",),
       (_x("pcsk_", (ALNUM, 6), "_", (ALNUM, 63)),)),
    _P("google", r"AIza[0-9A-Za-z_\-]{35}", ("AIza",), (_x("AIzaSy", (URLSAFE, 33)),)),
    _P("google", r"GOCSPX-[A-Za-z0-9_\-]{28}", ("GOCSPX-",), (_x("GOCSPX-", (URLSAFE, 28)),)),
    _P("google", r"ya29\.[0-9A-Za-z_\-]{30,4096}", ("ya29.",), (_x("ya29.a0", (URLSAFE, 150)),), "random"),
    # -- cloud providers and their connection strings --------------------------------------------
    _P("aws", r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{100,4096}", ("IQoJb3JpZ2luX2Vj", "FwoGZXIvYXdzE"),
       (_x("IQoJb3JpZ2luX2Vj", (B64, 300)),)),  # session tokens
    _P("aws", r"ABSKQmVkcm9ja0FQSUtleS[A-Za-z0-9+/=]{40,2048}", ("ABSKQmVkcm9ja0FQSUtleS",),
       (_x("ABSKQmVkcm9ja0FQSUtleS", (B64, 110)),)),  # Bedrock API keys
    _P("aws", r"amzn\.mws\." + _UUID, ("amzn.mws.",), ("amzn.mws." + _uuid("mws"),)),
    _P("azure", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}", ("Q~",),
       (_x((ALNUM, 3), "8Q~", (ALNUM, 34)),), inner=True),  # Entra ID (Azure AD) client secrets
    _P("azure", r"AccountKey=([A-Za-z0-9+/]{40,256}={0,2})", ("AccountKey=",),
       (_x("DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=", (B64, 86),
           "==;EndpointSuffix=core.windows.net"),), group=1),
    _P("azure", r"SharedAccessKey=([A-Za-z0-9+/]{40,256}={0,2})", ("SharedAccessKey=",),
       (_x("Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
           "SharedAccessKey=", (B64, 43), "="),), group=1),
    _P("azure", r"sig=([A-Za-z0-9%+/]{30,512}(?:%3D|=){0,2})", ("sig=",),
       (_x("https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2030-01-01&sr=b&sp=r&sig=",
           (ALNUM, 20), "%2B", (ALNUM, 20), "%2F", (ALNUM, 10), "%3D"),), "random", group=1),  # SAS signatures
    _P("gcp", r"private_key_id\\?\"[ \t]*:[ \t]*\\?\"([0-9a-f]{40})\\?\"", ("private_key_id",),
       (_x('{"type": "service_account", "private_key_id": "', (HEX, 40), '"}'),), group=1, token=False),
    _P("digitalocean", r"do[opr]_v1_[0-9a-f]{64}", ("dop_v1_", "doo_v1_", "dor_v1_"),
       (_x("dop_v1_", (HEX, 64)), _x("dor_v1_", (HEX, 64)))),
    _P("alibaba", r"LTAI[A-Za-z0-9]{12,20}", ("LTAI",), (_x("LTAI", (ALNUM, 20)),), "strong"),
    _P("tencent", r"AKID[A-Za-z0-9]{32}", ("AKID",), (_x("AKID", (ALNUM, 32)),), "strong"),
    _P("yandex", r"AQVN[A-Za-z0-9_\-]{35,38}", ("AQVN",), (_x("AQVN", (URLSAFE, 36)),), "mixed"),
    _P("yandex", r"YC[A-Za-z0-9_\-]{38}", ("YC",), (_x("YC", (URLSAFE, 38)),), "strong"),
    _P("yandex", r"t1\.[A-Za-z0-9_\-]{1,512}=*\.[A-Za-z0-9_\-]{86}=*", ("t1.",),
       (_x("t1.", (URLSAFE, 60), ".", (URLSAFE, 86)),)),
    _P("heroku", r"HRKU-AA[0-9A-Za-z_\-]{58}", ("HRKU-",), (_x("HRKU-AA", (URLSAFE, 58)),)),
    _P("cloudflare", r"v1\.0-[0-9a-f]{24}-[0-9a-f]{146}", ("v1.0-",), (_x("v1.0-", (HEX, 24), "-", (HEX, 146)),)),
    _P("cloudflare", r"cf(?:ut|at|k)_[A-Za-z0-9]{40,128}", ("cfut_", "cfat_", "cfk_"), (_x("cfut_", (ALNUM, 48)),),
       "random"),
    _P("flyio", r"fo1_[A-Za-z0-9_\-]{43}", ("fo1_",), (_x("fo1_", (URLSAFE, 43)),)),
    _P("flyio", r"fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,4096}={0,3}", ("fm1a_", "fm1r_", "fm2_"),
       (_x("fm2_", (B64, 200), "=="),)),
    _P("vercel", r"vc[pikar]_[A-Za-z0-9]{24,128}", ("vcp_", "vci_", "vck_", "vca_", "vcr_"), (_x("vcp_", (ALNUM, 56)),),
       "random"),
    _P("netlify", r"nfp_[A-Za-z0-9]{36,44}", ("nfp_",), (_x("nfp_", (ALNUM, 40)),), "random"),
    _P("supabase", r"sbp_[0-9a-f]{40}", ("sbp_",), (_x("sbp_", (HEX, 40)),)),
    _P("supabase", r"sb_secret_[A-Za-z0-9_\-]{20,128}", ("sb_secret_",), (_x("sb_secret_", (URLSAFE, 31)),), "random"),
    _P("planetscale", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,64}", ("pscale_",),
       (_x("pscale_tkn_", (URLSAFE, 43)), _x("pscale_pw_", (URLSAFE, 43))), "random"),
    _P("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_\-]{2,35}\.)?[A-Za-z0-9]{40,44}", ("dp.",),
       (_x("dp.pt.", (ALNUM, 43)), _x("dp.st.prd.", (ALNUM, 43)))),
    _P("pulumi", r"pul-[0-9a-f]{40}", ("pul-",), (_x("pul-", (HEX, 40)),)),
    _P("terraform", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}", (".atlasv1.",),
       (_x((ALNUM, 14), ".atlasv1.", (URLSAFE, 67)),)),
    _P("hashicorp_vault", r"hvs\.[A-Za-z0-9_\-]{90,120}", ("hvs.",), (_x("hvs.CAES", (URLSAFE, 92)),)),
    _P("hashicorp_vault", r"hvb\.[A-Za-z0-9_\-]{138,300}", ("hvb.",), (_x("hvb.AAAAAQ", (URLSAFE, 160)),)),
    _P("databricks", r"dapi[0-9a-f]{32}(?:-\d)?", ("dapi",), (_x("dapi", (HEX, 32)),), "random"),
    _P("scaleway", r"SCW[A-Z0-9]{17}", ("SCW",), (_x("SCW", (UPALNUM, 17)),), "random"),
    _P("render", r"rnd_[A-Za-z0-9]{32}", ("rnd_",), (_x("rnd_", (ALNUM, 32)),), "strong"),
    _P("openshift", r"sha256~[A-Za-z0-9_\-]{43}", ("sha256~",), (_x("sha256~", (URLSAFE, 43)),)),
    _P("tailscale", r"tskey-[a-z]{2,16}-[A-Za-z0-9]{6,64}-[A-Za-z0-9]{20,128}", ("tskey-",),
       (_x("tskey-auth-", (ALNUM, 12), "CNTRL-", (ALNUM, 32)),)),
    _P("neon", r"napi_[a-z0-9]{64}", ("napi_",), (_x("napi_", (LOWALNUM, 64)),), "random"),
    _P("deno", r"dd[pw]_[A-Za-z0-9]{36}", ("ddp_", "ddw_"), (_x("ddp_", (ALNUM, 36)),), "strong"),
    _P("firebase", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{130,140}", (":APA91b",),
       (_x("AAAA", (URLSAFE, 7), ":APA91b", (URLSAFE, 134)),)),  # Cloud Messaging server keys
    # -- source hosts, package registries, developer tools ----------------------------------------
    _P("github", r"gh[pousr]_[A-Za-z0-9_]{36,251}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
       (_x("ghp_", (ALNUM, 36)), _x("ghs_", (ALNUM, 36)))),
    _P("github", r"github_pat_[A-Za-z0-9_]{22,255}", ("github_pat_",),
       (_x("github_pat_11", (UPALNUM, 20), "_", (ALNUM, 59)),)),
    _P("gitlab",
       r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas|ffct)-[A-Za-z0-9_\-]{20,1024}(?:\.[0-9a-z]{2}\.?[0-9a-z]{7})?",
       ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "glagent-", "gloas-", "glffct-"),
       (_x("glpat-", (URLSAFE, 20)), _x("glpat-", (URLSAFE, 36), ".", (LOWALNUM, 9))), "random"),
    _P("bitbucket", r"ATBB[A-Za-z0-9_=.\-]{28,64}", ("ATBB",), (_x("ATBB", (ALNUM, 32)),), "strong"),
    _P("bitbucket", r"ATCTT3xFfGN0[A-Za-z0-9_\-=]{150,300}", ("ATCTT3",), (_x("ATCTT3xFfGN0", (URLSAFE, 180)),)),
    _P("atlassian", r"ATATT3[A-Za-z0-9_\-=]{150,300}", ("ATATT3",), (_x("ATATT3xFfGF0", (URLSAFE, 180)),)),
    _P("npm", r"npm_[A-Za-z0-9]{36}", ("npm_",), (_x("npm_", (ALNUM, 36)),)),
    _P("pypi", r"pypi-AgE[A-Za-z0-9_\-]{40,1024}", ("pypi-",),
       (_x("pypi-AgEIcHlwaS5vcmc", (URLSAFE, 120)), _x("pypi-AgENdGVzdC5weXBpLm9yZw", (URLSAFE, 120)))),
    _P("rubygems", r"rubygems_[0-9a-f]{48}", ("rubygems_",), (_x("rubygems_", (HEX, 48)),)),
    _P("nuget", r"oy2[a-z0-9]{43}", ("oy2",), (_x("oy2", (LOWALNUM, 43)),), "random"),
    _P("docker", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,128}", ("dckr_",), (_x("dckr_pat_", (URLSAFE, 27)),)),
    _P("crates", r"cio[A-Za-z0-9]{32}", ("cio",), (_x("cio", (ALNUM, 32)),), "strong"),
    _P("jfrog", r"AKCp[A-Za-z0-9]{69}", ("AKCp",), (_x("AKCp", (ALNUM, 69)),), "strong"),
    _P("jfrog", r"cmVmd[A-Za-z0-9]{59}", ("cmVmd",), (_x("cmVmdGtuOjAx", (ALNUM, 52)),), "strong"),
    _P("clojars", r"CLOJARS_[a-z0-9]{60}", ("CLOJARS_",), (_x("CLOJARS_", (LOWALNUM, 60)),), "random"),
    _P("shopify", r"shp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}", ("shpat_", "shpss_", "shpca_", "shppa_"),
       (_x("shpat_", (HEX, 32)), _x("shpss_", (HEX, 32)))),
    _P("postman", r"PMAK-[0-9a-f]{24}-[0-9a-f]{34}", ("PMAK-",), (_x("PMAK-", (HEX, 24), "-", (HEX, 34)),)),
    _P("sourcegraph", r"sgp_(?:[0-9a-f]{16}_|local_)?[0-9a-f]{40}", ("sgp_",),
       (_x("sgp_", (HEX, 16), "_", (HEX, 40)),)),
    _P("grafana", r"glc_[A-Za-z0-9+/]{32,400}={0,3}", ("glc_",), (_x("glc_", (B64, 120), "=="),), "strong"),
    _P("grafana", r"glsa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8}", ("glsa_",), (_x("glsa_", (ALNUM, 32), "_", (HEX, 8)),)),
    _P("grafana", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", ("eyJrIjoi",), (_x("eyJrIjoi", (ALNUM, 92), "="),)),
    _P("linear", r"lin_(?:api|oauth)_[A-Za-z0-9]{40,64}", ("lin_api_", "lin_oauth_"), (_x("lin_api_", (ALNUM, 40)),)),
    _P("notion", r"ntn_[0-9]{11}[A-Za-z0-9]{35}", ("ntn_",), (_x("ntn_", (DIGITS, 11), (ALNUM, 35)),)),
    _P("notion", r"secret_[A-Za-z0-9]{43}", ("secret_",), (_x("secret_", (ALNUM, 43)),), "strong"),
    _P("airtable", r"pat[A-Za-z0-9]{14}\.[0-9a-f]{64}", ("pat",), (_x("pat", (ALNUM, 14), ".", (HEX, 64)),)),
    _P("figma", r"figd_[A-Za-z0-9_\-]{40,128}", ("figd_",), (_x("figd_", (URLSAFE, 40)),)),
    _P("typeform", r"tfp_[A-Za-z0-9_\-.=]{59}", ("tfp_",), (_x("tfp_", (ALNUM, 59)),)),
    _P("mapbox", r"sk\.eyJ[A-Za-z0-9_\-]{20,512}\.[A-Za-z0-9_\-]{20,128}", ("sk.eyJ",),
       (_x("sk.eyJ1IjoiYWNtZSIsImEiOiJ", (ALNUM, 40), ".", (URLSAFE, 22)),)),
    _P("sentry", r"sntrys_eyJ[A-Za-z0-9+/=_]{50,1024}", ("sntrys_",),
       (_x("sntrys_eyJpYXQiOjE3", (B64, 140), "_", (B64, 43)),)),
    _P("sentry", r"sntryu_[0-9a-f]{64}", ("sntryu_",), (_x("sntryu_", (HEX, 64)),)),
    _P("dynatrace", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", ("dt0c01.",),
       (_x("dt0c01.", (UPALNUM, 24), ".", (UPALNUM, 64)),)),
    _P("newrelic", r"NR(?:AK|II|AA)-[A-Za-z0-9_\-]{27,32}", ("NRAK-", "NRII-", "NRAA-"),
       (_x("NRAK-", (UPALNUM, 27)), _x("NRII-", (LOWALNUM, 32))), "random"),
    _P("newrelic", r"[0-9a-f]{36}NRAL", ("NRAL",), (_x((HEX, 36), "NRAL"),), "random", inner=True),  # license keys
    _P("posthog", r"phx_[A-Za-z0-9]{40,128}", ("phx_",), (_x("phx_", (ALNUM, 43)),), "strong"),
    _P("1password", r"ops_eyJ[A-Za-z0-9+/=_\-]{100,4096}", ("ops_eyJ",),
       (_x("ops_eyJzaWduSW5BZGRyZXNzIjoi", (B64, 260)),)),
    _P("1password", r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
       ("A3-",),
       (_x("A3-", (UPALNUM, 6), "-", (UPALNUM, 11), "-", (UPALNUM, 5), "-", (UPALNUM, 5), "-", (UPALNUM, 5)),)),
    _P("age", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", ("AGE-SECRET-KEY-1",),
       (_x("AGE-SECRET-KEY-1", (BECH32, 58)),)),
    _P("sonarqube", r"sq[pua]_[0-9a-f]{40}", ("sqp_", "squ_", "sqa_"), (_x("sqp_", (HEX, 40)),)),
    _P("circleci", r"CCIP(?:AT|RJ)_[A-Za-z0-9]{22}_[0-9a-f]{40}", ("CCIPAT_", "CCIPRJ_"),
       (_x("CCIPAT_", (ALNUM, 22), "_", (HEX, 40)),)),
    _P("buildkite", r"bkua_[0-9a-f]{40}", ("bkua_",), (_x("bkua_", (HEX, 40)),)),
    _P("harness", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", ("pat.", "sat."),
       (_x("pat.", (URLSAFE, 22), ".", (ALNUM, 24), ".", (ALNUM, 20)),)),
    _P("infisical", r"st\.[0-9a-f\-]{24,36}\.[0-9a-f]{32}\.[0-9a-f]{32}", ("st.",),
       (_x("st.", (HEX, 24), ".", (HEX, 32), ".", (HEX, 32)),)),
    _P("octopus_deploy", r"API-[A-Z0-9]{26}", ("API-",), (_x("API-", (UPALNUM, 26)),), "random"),
    _P("scalingo", r"tk-us-[A-Za-z0-9_\-]{48}", ("tk-us-",), (_x("tk-us-", (URLSAFE, 48)),)),
    _P("prefect", r"pnu_[A-Za-z0-9]{36}", ("pnu_",), (_x("pnu_", (ALNUM, 36)),)),
    _P("readme", r"rdme_[a-z0-9]{70}", ("rdme_",), (_x("rdme_", (LOWALNUM, 70)),)),
    _P("infracost", r"ico-[A-Za-z0-9]{32}", ("ico-",), (_x("ico-", (ALNUM, 32)),), "strong"),
    _P("launchdarkly", r"(?:api|sdk)-" + _UUID, ("api-", "sdk-"), ("api-" + _uuid("ld"),)),
    _P("contentful", r"CFPAT-[A-Za-z0-9_\-]{43}", ("CFPAT-",), (_x("CFPAT-", (URLSAFE, 43)),)),
    _P("frameio", r"fio-u-[A-Za-z0-9_\-=]{64}", ("fio-u-",), (_x("fio-u-", (URLSAFE, 64)),)),
    _P("dropbox", r"sl\.(?:u\.)?[A-Za-z0-9_\-]{130,2048}", ("sl.",), (_x("sl.u.", (URLSAFE, 140)),), "strong"),
    _P("hubspot", r"pat-(?:na|eu)[0-9]-" + _UUID, ("pat-",), ("pat-na1-" + _uuid("hubspot"),)),
    _P("clickup", r"pk_[0-9]{6,10}_[A-Z0-9]{32}", ("pk_",), (_x("pk_", (DIGITS, 8), "_", (UPALNUM, 32)),)),
    _P("adobe", r"p8e-[A-Za-z0-9]{32}", ("p8e-",), (_x("p8e-", (ALNUM, 32)),), "strong"),
    _P("defined_networking", r"dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}", ("dnkey-",),
       (_x("dnkey-", (LOWALNUM, 26), "-", (LOWALNUM, 52)),)),
    _P("settlemint", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", ("sm_aat_", "sm_pat_", "sm_sat_"),
       (_x("sm_pat_", (ALNUM, 16)),), "random"),
    _P("maxmind", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", ("_mmk",), (_x((ALNUM, 6), "_", (ALNUM, 29), "_mmk"),),
       "strong", inner=True),
    _P("clickhouse", r"4b1d[A-Za-z0-9]{38}", ("4b1d",), (_x("4b1d", (ALNUM, 38)),), "strong"),
    _P("intra42", r"s-s4t2(?:ud|af)-[0-9a-f]{64}", ("s-s4t2",), (_x("s-s4t2ud-", (HEX, 64)),)),
    # -- messaging, e-mail, webhooks --------------------------------------------------------------
    _P("slack", r"xox[a-z]-[A-Za-z0-9\-]{10,256}", ("xox",),
       (_x("xoxb-", (DIGITS, 12), "-", (DIGITS, 13), "-", (ALNUM, 24)),), "random"),
    _P("slack", r"xapp-\d-[A-Za-z0-9\-]{10,256}", ("xapp-",),
       (_x("xapp-1-A", (UPALNUM, 10), "-", (DIGITS, 13), "-", (HEX, 64)),)),
    _P("slack", r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{20,256}",
       ("hooks.slack.com",),
       (_x("https://hooks.slack.com/services/T", (UPALNUM, 10), "/B", (UPALNUM, 10), "/", (ALNUM, 24)),)),
    _P("discord", r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}", ("M", "N", "O"),
       (_user_id(1234567890123456789) + _x(".G", (URLSAFE, 5), ".", (URLSAFE, 38)),
        _user_id(412345678901234567) + _x(".", (URLSAFE, 6), ".", (URLSAFE, 27))), "discord"),
    _P("discord", r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/[0-9]{17,20}/([A-Za-z0-9_\-]{60,72})", ("discord",),
       (_x("https://discord.com/api/webhooks/", (DIGITS, 19), "/", (URLSAFE, 68)),), group=1),
    _P("telegram", r"(?:bot)?([0-9]{8,10}:AA[A-Za-z0-9_\-]{33})", (":AA",),
       (_x("https://api.telegram.org/bot", (DIGITS, 10), ":AA", (URLSAFE, 33), "/sendMessage"),),
       group=1),
    _P("microsoft_teams", r"IncomingWebhook/([0-9a-f]{32}/" + _UUID + ")", ("IncomingWebhook/",),
       ("https://acme.webhook.office.com/webhookb2/" + _uuid("t1") + "@" + _uuid("t2")
        + _x("/IncomingWebhook/", (HEX, 32), "/") + _uuid("t3"),), group=1),
    _P("mailgun", r"key-[0-9a-f]{32}", ("key-",), (_x("key-", (HEX, 32)),), "random"),
    _P("brevo", r"x(?:keysib|smtpsib)-[0-9a-f]{64}-[A-Za-z0-9]{16}", ("xkeysib-", "xsmtpsib-"),
       (_x("xkeysib-", (HEX, 64), "-", (ALNUM, 16)),)),
    _P("resend", r"re_[A-Za-z0-9]{6,10}_[A-Za-z0-9]{20,32}", ("re_",), (_x("re_", (ALNUM, 8), "_", (ALNUM, 24)),),
       "strong"),
    # -- payments and commerce --------------------------------------------------------------------
    _P("stripe", r"(?:sk|rk)_(?:live|test|prod)_[0-9A-Za-z]{16,256}",
       ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
       (_x("sk_live_", (ALNUM, 24)), _x("rk_live_", (ALNUM, 99)))),
    _P("stripe", r"whsec_[A-Za-z0-9]{32,128}", ("whsec_",), (_x("whsec_", (ALNUM, 32)),), "random"),
    _P("square", r"sq0atp-[A-Za-z0-9_\-]{22}", ("sq0atp-",), (_x("sq0atp-", (URLSAFE, 22)),)),
    _P("square", r"sq0csp-[A-Za-z0-9_\-]{43}", ("sq0csp-",), (_x("sq0csp-", (URLSAFE, 43)),)),
    _P("square", r"EAAA[A-Za-z0-9_\-+=]{60}", ("EAAA",), (_x("EAAA", (ALNUM, 60)),), "strong"),
    _P("facebook", r"EAA[A-Za-z0-9]{90,512}", ("EAA",), (_x("EAAC", (ALNUM, 160)),), "strong"),
    _P("braintree", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}", ("access_token$",),
       (_x("access_token$production$", (LOWALNUM, 16), "$", (HEX, 32)),), token=False),
    _P("adyen", r"AQE[A-Za-z0-9+/=\-]{100,512}", ("AQE",), (_x("AQEyhmfx", (B64, 110), "=-", (B64, 40)),), "strong"),
    _P("plaid", r"access-(?:sandbox|development|production)-" + _UUID,
       ("access-sandbox-", "access-development-", "access-production-"), ("access-production-" + _uuid("plaid"),)),
    _P("flutterwave", r"FLWSECK(?:_TEST)?-[0-9a-f]{32}-X", ("FLWSECK",), (_x("FLWSECK-", (HEX, 32), "-X"),)),
    _P("razorpay", r"rzp_(?:live|test)_[A-Za-z0-9]{14}", ("rzp_live_", "rzp_test_"), (_x("rzp_live_", (ALNUM, 14)),),
       "random"),
    _P("shippo", r"shippo_(?:live|test)_[0-9a-fA-F]{40}", ("shippo_",), (_x("shippo_live_", (HEX, 40)),)),
    _P("easypost", r"EZ[AT]K[A-Za-z0-9]{54}", ("EZAK", "EZTK"), (_x("EZAK", (ALNUM, 54)),)),
    _P("duffel", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ("duffel_",), (_x("duffel_live_", (URLSAFE, 43)),)),
    _P("gocardless", r"live_[A-Za-z0-9_\-=]{40}", ("live_",), (_x("live_", (ALNUM, 40)),), "strong"),
    _P("lob", r"(?:live|test)_[0-9a-f]{35}", ("live_", "test_"), (_x("test_", (HEX, 35)),), "random"),
    _P("mercadopago", r"APP_USR-[0-9]{16}-[0-9]{6}-[0-9a-f]{32}-[0-9]{6,9}", ("APP_USR-",),
       (_x("APP_USR-", (DIGITS, 16), "-", (DIGITS, 6), "-", (HEX, 32), "-", (DIGITS, 9)),)),
    _P("twitter", r"AAAAAAAAAAAAAAAAAAAAA[A-Za-z0-9]{10,256}%[A-Za-z0-9%]{30,256}", ("AAAAAAAAAAAAAAAAAAAAA",),
       (_x("AAAAAAAAAAAAAAAAAAAAA", (ALNUM, 20), "%2B", (ALNUM, 30), "%3D", (ALNUM, 50)),)),  # app bearer tokens
)  # fmt: skip

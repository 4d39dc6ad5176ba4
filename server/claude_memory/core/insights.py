"""What the user's prompts say that outlives them (seed §3.4, §4.4, done better): canonical keys and repeated topics,
and the rules and preferences a user states ("always use pnpm", "never push without the tests", "ruff instead of
black", "from now on ..."), grouped so that one preference stated ten ways is one insight with ten pieces of
evidence, a later contrary statement superseding the earlier one. Rule-based, pure.

Precision first: a wrong "preference" injected into every session costs more than a missed one. A sentence is a rule
only when it is an instruction (not a question, not narration, not someone else's words), carries a mark of lasting
(always / never, "from now on", "in this repo", a convention, a replacement of one tool by another, a stopped habit)
and no mark of the moment ("for now", "this time", "in this PR"), or, when it carries no such mark, when the learned
half (``core/rule_model.py``, fitted on labelled prompts) is sure enough of it. The figures are in
``bench/preferences``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import Stemmer

from claude_memory.core import rule_model

# ---------------------------------------------------------------------- canonical keys (seed §3.4)

KEY_MAX: Final = 200
_NOT_LETTER_OR_NUMBER = re.compile(r"[^\w\s]|_")  # \w is letters, digits and "_": the seed removes "_" too
_SPACES = re.compile(r"\s+")


def canonical_key(text: str, project: str | None = None) -> str:
    """NFKC, lower case, only letters, numbers and single spaces, ``project::`` prefixed; a key over 200 characters
    keeps its first 191 and ``_`` + 8 hex of the MD5 of the whole key."""
    key = _NOT_LETTER_OR_NUMBER.sub("", unicodedata.normalize("NFKC", text).lower())
    key = _SPACES.sub(" ", key).strip()
    if project:
        key = f"{project}::{key}"
    if len(key) > KEY_MAX:
        key = key[:191] + "_" + hashlib.md5(key.encode()).hexdigest()[:8]
    return key


# ---------------------------------------------------------------------- rules stated in a prompt


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule or preference one sentence of a prompt states."""

    text: str  # the sentence, as written (clipped)
    polarity: str  # do | dont
    explicit: bool  # said with always / never (or an equally explicit "from now on")
    favours: tuple[str, ...]  # the terms it says to use or do
    rejects: tuple[str, ...]  # the terms it says not to use or do
    terms: tuple[str, ...]  # every content term, for grouping
    stops: bool = False  # it stops a habit ("stop running mypy before finishing")

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "polarity": self.polarity,
            "explicit": self.explicit,
            "favours": list(self.favours),
            "rejects": list(self.rejects),
            "terms": list(self.terms),
            "stops": self.stops,
        }

    @staticmethod
    def from_json(data: dict[str, object]) -> Rule:
        def strings(key: str) -> tuple[str, ...]:
            value = data.get(key)
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return Rule(
            str(data.get("text", "")),
            str(data.get("polarity", "do")),
            bool(data.get("explicit")),
            strings("favours"),
            strings("rejects"),
            strings("terms"),
            bool(data.get("stops")),
        )


RULE_CHARS: Final = 200
# the version of what :func:`rules` finds, raised when it changes: prompts read by another version are read again
EXTRACTOR: Final = 11

_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_CODE_SPAN = re.compile(r"`([^`\n]{1,60})`")
_QUOTED = re.compile(r"\"[^\"\n]{0,200}\"|“[^”\n]{0,200}”|‘[^’\n]{0,200}’|(?<![\w'])'[^'\n]{2,200}'(?![\w'])")
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n\s*\n+|\n(?=\s*(?:[-*•]|\d+[.)])\s)|\s+[—–]\s+|\s+-\s+")
# a long prompt is mostly pasted (a review, a CI log, an error): only its opening words are the user's own
OWN_WORDS: Final = 400
LONG_PROMPT: Final = 800
_PARAGRAPH = re.compile(r"\n\s*\n")
# a sentence that says what something is, not what to do: "The authentication bug must be fixed before merging."
_BLOCKQUOTE = re.compile(r"^\s*>.*$", re.M)
# "don't touch src/pages/cart.tsx" (or `cartCache`) is about this task's file ("don't commit .env files" is a rule), and
# so is a sentence that opens with a task on an object ("refactor cart.ts to use X instead of Y")
_DONT_EDIT = re.compile(r"\b(don't|do not|dont) (touch|modify|change|edit|delete|remove|rename|move|refactor)\b")
_ONE_FILE = re.compile(
    r"(?<![\w*])(?:[\w.-]+/)+[\w-]+\.[A-Za-z0-9]{1,6}\b|(?<![\w*.])[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{1,5}\b"
    r"|(?<![\w*.])\.[\w-]+\.[A-Za-z]{1,5}\b|`[^`\n]+`"  # a dotfile too: .eslintrc.cjs
)
_TASK_START = re.compile(
    r"^(please |pls |can you |could you )?(refactor|rewrite|change|update|convert|migrate|port|modify|fix|"
    r"make(?! sure| it a habit)|move|replace|split|rename|extract|reuse|remove|delete|add|bump|revert|drop|implement|"
    r"create|run)\b"
)
_WE_USE = re.compile(
    r"^(we|our team|the team) (use|follow|prefer)\b.*\b(here|in this (repo|repository|project|codebase))\b"
)
_POLITE = re.compile(r"\s*\b(please|pls|plz)\b")
_DESCRIBES = re.compile(
    r"^((and|but|so|also|because) )?(the|this|that|these|those|it|it's|there|there's|he|she|they|its|his|her|their)\b"
)
_QUESTION_START = re.compile(
    r"^(why|how|what|when(?! you \w+[^?]*,)|where|which|who|whose|do you|does|did|is|are|can|could|would|will|was|"
    r"were|have you|has|"
    r"should i|should we|shall|any idea|wonder)\b"
)
# the moment, not a lasting rule
_ONE_OFF = re.compile(
    r"\b(for now|this time|for this (run|task|pr|change|commit|one|file|branch|session|ticket|test|fix|feature|"
    r"migration|release|bug|step)|in this (pr|branch|commit|change)|just for|right now|temporarily|for the moment|"
    r"for today|today|tonight|this once|until (we|i|it|the)|for a (bit|while|sec)|at the moment|here only|"
    r"never ?mind|for the demo|tomorrow|next (week|month|sprint|release)|getting (deleted|removed)|this sprint|"
    r"this week|in that file|on this one|this (session|conversation|chat)|"
    r"(it's|it is|that's|they're) (\w+ and )?temporary|"
    r"when you (get|have) a (chance|minute|moment|sec|second)|when you('re| are) (done|finished|back)|"
    r"when you (finish|are finished with|'re finished with) (the|this|that|it))\b"
)
# narration, idioms and other people's words: "I never thought of that", "the linter says always use const"
_NOT_AN_INSTRUCTION = re.compile(
    r"\b(i|we|they|he|she|it|you) (always|never) (\w+ed|used|thought|knew|had|was|were|did|got|went|saw|heard|"
    r"said|told|made|ran|wrote|forgot|found|took|seems?|gets?|fails?|breaks?|returns?|works?|happens?|crash\w*)\b"
    r"|\bused to\b|\bnever (thought|heard|seen|knew|been|understood)\b|\balways (thought|wondered)\b"
    r"|\b(?!(i|to)\b)[\w-]+ (says|said|suggests|suggested|recommends|recommended|tells|told|warns|warned|claims|"
    r"claimed|mentions|mentioned|complains|complained|reads)\b|\baccording to\b|\bkeeps (saying|telling|complaining)\b"
    r"|\b(?!(i|to|you|we|they|and|or|then)\b)[\w'-]+ say\b"
    r"|\b(my|our|the) first time\b|^(hey|hi|hello),? first time\b"  # someone else's ("clippy says ...")
    r"|\b[\w-]+:\s*(always|never)\s*($|[.,;]|(is|are|was|set|in|on|for)\b)"  # a setting: "restart: always"
    r"|\b(if|whether|unless) (you|we|i) (always|never)\b|\bnot always\b|\balmost (always|never)\b"
    r"|\b(is|are|was|were|isn't|aren't|it's|that's) (always|never)\b|\b(always|never) (been|had|was|were|got|seemed)\b"
    r"|^(\w+: )?(i've|i'm|i'll|i was|we've|we had|we were|we'll|i just|i also|i(?!['’]))\b(?! (always |never |really )?"
    r"(want|prefer|like|need|expect|insist)\b)"  # the speaker's own story ("I'll make sure to remember this")
    r"|^(\w+: )?i'd\b(?! (like|prefer|rather|want) you\b)"  # a wish of the moment ("I'd like to try feta")
    r"|\b(don't|do not) (worry|be afraid|hesitate|forget to (stay|be|have|enjoy))\b"
)
# what a rule for a coding assistant is about: code-like tokens (a path, a flag, `code`, snake_case, camelCase, a
# version) or the words of software work and of how the assistant should answer. A sentence about neither ("always
# try something new", "never give up") is small talk, whatever its form.
_CODE_LIKE = re.compile(
    r"`|[\w-]+\.[a-z]{1,5}\b|\b\w+_\w+\b|\b[A-Za-z]*[a-z][A-Z]\w*|\b[A-Z]{2,6}s?\b|(^|\s)--?\w|\w/\w|\w\(\)|"
    r"\b\d+(\.\d+)+\b"
)
_WORK = re.compile(
    r"\b(code|coding|test\w*|spec|commit\w*|push\w*|pull|merg\w*|branch\w*|main|master|rebase|git|pr|prs|review\w*|"
    r"lint\w*|format\w*|typecheck\w*|types?|typing|compile\w*|build\w*|deploy\w*|release\w*|ci|cd|pipeline\w*|"
    r"install\w*|package\w*|dependenc\w*|deps|lockfile|librar\w*|framework|module\w*|import\w*|export\w*|file\w*|"
    r"folder\w*|director\w*|path\w*|function\w*|method\w*|class\w*|component\w*|hook\w*|variable\w*|const|"
    r"var|interface\w*|api\w*|endpoint\w*|route\w*|server\w*|client\w*|database\w*|db|sql|quer\w*|"
    r"migration\w*|schema\w*|table\w*|index\w*|config\w*|settings?|env|environment\w*|secret\w*|key\w*|jobs?|"
    r"submit\w*|sweeps?|errors?|unwraps?|floats?|money|currency|"
    r"token\w*|password\w*|credential\w*|log\w*|logger|error\w*|exception\w*|bug\w*|fix\w*|debug\w*|"
    r"refactor\w*|rename\w*|comment\w*|docstring\w*|docs?|documentation|readme|changelog|naming|names?|"
    r"indent\w*|tabs?|spaces?|quotes?|semicolons?|line\w*|chars?|characters?|width|style|convention\w*|"
    r"script\w*|command\w*|cli|terminal|shell|bash|docker\w*|kubectl|k8s|prod\w*|staging|repo\w*|"
    r"codebase|projects?|issue\w*|ticket\w*|tasks?|todo\w*|version\w*|upgrade\w*|npm|pnpm|yarn|pip|"
    r"python|typescript|javascript|js|ts|rust|go|java|html|css|json|yaml|markdown|answer\w*|repl\w*|respon\w*|"
    r"explain\w*|summar\w*|concise|brief|shorter|verbose|emojis?|english|language|ask\w*|confirm\w*|questions?|"
    r"changes?|diff\w*|patch\w*|edit\w*|write\w*|output\w*|print\w*|async|await|promise\w*|null|"
    r"any|unknown|default|exports?|tags?|resources?|modules?|terraform|tf|aws|cloud\w*|infra\w*|secrets?|"
    r"mypy|ruff|black|flake8|pylint|pytest|jest|vitest|eslint|prettier|biome|clippy|cargo|gradle|maven|kotlin|"
    r"swift|compose|xml|uv|poetry|pipenv|conda|node|deno|bun|react|vue|django|flask|fastapi|rails|sentry|"
    r"stdout|stderr|utf-8|unicode|timezone|utc|decimal|float|int|string|strings|done|finished|plan|handler\w*|prefix\w*|"
    r"suffix\w*|services?|clusters?|kube\w*|kotest|junit|assertj|mockk|mockito|testcontainers|rspec|unittest)\b"
)
_ALWAYS_NEVER = re.compile(
    r"(^|(?:,|(?<!:):)\s*|\b(please|pls|and|also|but|so|ok|okay|then|remember to|remember|make sure to|make sure you|"
    r"you should|you must|you need to|we should|we must|we|i want you to|i'd like you to|you'll|you will|"
    r"please make sure to|please make sure you|just)\s+)(always|never)\b(?![-_])"
)
_LASTING = re.compile(
    r"\b(from now on|going forward|moving forward|in (the )?future|by default|from here on( out)?|for all future|"
    r"every time|each time|whenever you|for every|every single|on every|anymore|any more(?=\s*([.!,;]|$))|"
    r"from today on|"
    r"as a rule|as a habit|in general|generally|as usual|ever again|here too|here as well|(don't|dont|do not|never) "
    r"ever|the whole (codebase|code base|repo|repository|project)|anywhere|everywhere|nowhere else|hard requirement|"
    r"non-negotiable|off the table|across the (codebase|repo|project)|for (all |any |every )?new (code|\w+s)|"
    r"for everything|under no circumstances|make it a habit)\b|,\s*ever[.!]*$|\bever[.!]*$"
    r"|^(please )?(remember|note|keep in mind)( for (later|next time|the future))?( that)?\b"
    r"|^when(ever)? you (\w+)\b(?![^,]*\b(this|that|these|those|it)\b)"  # a habit: "when you return errors, wrap them"
)
_CONVENTION = re.compile(
    r"\b(in (this|our) (repo|repository|project|codebase|code base|team|org|app|engine|service|library|lib|crate|"
    r"package|monorepo|workspace)|like (the rest of|everywhere else in) (the|this|our) (codebase|code base|code|repo|"
    r"project|app|engine)|"
    r"(that's|this is|it's) how we (work|do (it|things))|our (convention|style|rule|standard|policy|preference)|"
    r"(the|a) (convention|house style|team rule|policy) (is|here)|\w+ here (follow|use|go|live)s?\b|"
    r"we (use|prefer|follow|write|do|don't|never|always)"
    r"\b[^.]*\b(here|in this|in our|across)\b|house style|team convention|convention here|our style guide|"
    r"(is|are) (the|our) (convention|standard|rule|policy)|we (agreed|decided)( as a team)? (to|that|on)|"
    r"like every other \w+|that's what we (use|do|want) (now|here)|(is|are) (banned|forbidden|not allowed)|"
    r"\bstays? out of (the |this |our )?(codebase|code base|repo|repository|project|code)|"
    r"we (test|run|format|lint|name|keep|build|deploy) [^.]*\b(here|in this|in our))\b"
)
# a rule said again: "as always", "I keep saying this", "that's a standing rule" (it may stand in its own sentence)
_REMINDER = re.compile(
    r"\b(as always|like always|same as (always|before|usual|every \w+( \w+)?)|as usual|i (keep|kept) (saying|telling)|"
    r"i (already )?(said|told you)|i've (said|told you)|(not going to|won't|shouldn't have to) (say|tell you|repeat) "
    r"(it|this|that)( again)?|standing (rule|order|instruction)|"
    r"(that's|it's|this is) (mandatory|non-negotiable|a rule)|"
    r"mandatory here|you know the drill|how many times|,\s*remember[.!]?$|"
    r"same as (in )?(the |all )?other (repos?|projects?)|same as everywhere( else)?|"
    r"same (deal|thing|rule|convention) as (on |in |for |with )?(the |my |our )?(other|\w+) (repos?|projects?)|"
    r"^again[,:])"
)
# process rules: an action tied to the moments that recur ("before committing", "before saying a task is done")
_BEFORE = re.compile(
    r"\bbefore (every |each |any )?(commits?|committing|you commit|push(es)?|pushing|you push|merg\w*|saying|you say|"
    r"done|finishing|you finish|opening a pr|you open a pr|releas\w*|declaring|(you )?tell me|"
    r"(you )?show (it |them )?(to )?me|(you )?start (editing|coding|changing|writing|implementing)|"
    r"(you )?(apply|run|change|edit|delete|install|add) (any|anything|changes|edits)|(you )?(applying|running|"
    r"changing|editing|deleting|installing|adding) (any|anything|changes|edits))\b"
)
# an obligation on a kind of thing: "every pub item needs a doc comment", "new modules need type hints", "anything
# that prints color has to respect NO_COLOR", "hyperparams belong in conf/"
_EVERY_NEEDS = re.compile(
    r"(^([\w ]{1,40}: )?|[,;] (and |so |but )?)(every|all|each|any|anything|everything|new) "
    r"(?!.*\b(this|these|those)\b)(?!.*(?<!thing )\bthat\b).{0,60}?\b"
    r"(needs?|must|should|has to|have to|gets?|belongs?|goes|go)\b"
    r"|^([\w ]{1,40}: )?(every|any|all) new \w+( \w+)?( we \w+)? (is|are) \w"
)
# a norm on a kind of thing, said of it in the plural: "user-facing strings have to be localized", "tests go in
# TrailmarkTests", "member variables get the m_ prefix", "strings go in strings.xml"
_NORM = re.compile(
    r"^(\w+( \w+)?: )?(?!(the|this|that|these|those|they|we|you|some|my|your|our|their|its|his|her|both|two|three|"
    r"most|many|few|several|such)\b)([\w@./+-]+ ){0,2}[\w@./+-]*[a-z]s (must|should|have to|need to|shouldn't|"
    r"should not|must not|mustn't|go (in|into|under)|"
    r"belong (in|to|under)|live (in|under|next to)|get (the|a|an)|get \w+ed|are always|always get|never get)\b"
    r"(?! (be )?(faster|slower|better|worse|fixed|working|passing|green|red|done|ready|failing)\b)"
    r"|^our [\w-]+s (live|go|belong) (in|into|under|next to)\b"  # "our tests live next to the code"
)
_NEGATED = re.compile(
    r"\b(shouldn't|should not|must not|mustn't|(is|are) (banned|forbidden|not allowed)|under no circumstances)\b"
)  # a norm or a ban that says what not to do
_ONLY = re.compile(
    r"^(\w+: )?(?!(?:not|if|the|an?|one|i|we|you)\b)(?P<what>[\w.@/+-]+(?: [\w.@/+-]+)?) only\b"
    r"(?! (if|when|for (this|now)|in this))"
)
_TEAM_HABIT = re.compile(
    r"^(we|our team|the team) (use|follow|prefer|write|do|don't|never|always|keep|run|tag|name)\b"
    r"|^we [\w-]+ (everything|every \w+|all (our |the )?\w+s)\b"  # "we squash-merge everything"
)
_WE_USE_FOR = re.compile(
    r"^(we|our team|the team) (use|prefer) \S+ for (everything|all|any|every|this kind of|these)\b"
)
# the common shapes of a standing request about how to work: stick to X, only use X, ask before deleting, explain the
# plan first, keep answers short, let's always ..., we don't do X here
_STANDING = re.compile(
    r"^(please |pls |and |also )?(stick (to|with)|only use|just use|keep using|default to|always go with)\b"
    r"|\bask (me )?(first\b|before (you )?(delet|remov|add|install|push|commit|run|chang|touch|modif|upgrad|renam)\w*)"
    r"|^(please )?(show me |give me )?(a |the )?diff(s)? (first|before)\b"
    r"|\bwithout (checking|asking) (with )?me( first)?\b"
    r"|^(short|shorter|brief|briefer|concise|terse)( answers| replies| responses)?( please| pls)?\b"
    r"|\b(explain|show|tell me|describe|outline|lay out|write up) (me )?(the|your|a) (plan|approach|changes?)\b.* "
    r"(before|first)\b"
    r"|\bkeep it (short|brief|concise|terse) when(ever)? you\b"
    r"|\bkeep (your |the )?(answers?|responses?|replies|explanations?|summar\w*|messages?|output) (short|brief|concise|"
    r"terse|to the point)\b|^(let's|lets) (always|never|stick (to|with))\b|\bwe don't do\b"
    r"|^(our|the) (msrv|minimum \w+ version|target) is\b"
)
_NO_THING = re.compile(
    r"^([\w ]{1,30}: |please,? |pls,? )?(no|zero) "
    r"(?!.*\b(\w+ed|found|given|shown|seen|run|done|made|available|left|yet|here|there)\b)"
    r"(?!(idea|worries|problem|thanks|need|way|luck|wait|rush|clue|longer|one|it|that|this|not|i|you|we|"
    r"more of (that|this))\b)[\w`@./+!()-]+( [\w`@./+()-]+){0,7}[.!]?$"
)
_PREFER = re.compile(
    r"\b(i|we|the user) (really |much |strongly |generally )?prefers?\b(?!\s+(if|that|when|you)\b)"
    r"|\bmy preference is\b|"
    r"\bprefer \S+( \S+)? (over|to|rather than|instead of)\b|^prefer\b"
)
_REPLACE = re.compile(
    r"\b(use|using|with|prefers?|pick|choose|go with|switch (back )?to|move to|moving to|migrate to|migrating to|"
    r"switching to|we're on|we are on|we're using)\s+(?P<new>[\w.@/+-]+( [\w.@/+-]+)?)\s*,?\s*"
    r"(not|instead of|rather than|over|in place of|and not)\s+(?P<old>[\w.@/+-]+)"
    r"|\b(?P<new2>[\w.@/+-]+( [\w.@/+-]+){0,2}),? (instead of|rather than) (?P<old2>[\w.@/+-]+)"
    r"|\b(?P<new3>[\w.@/+-]+), not (?P<old3>[\w.@/+-]+)"
    r"|\buse (the )?(?P<new4>[\w.@/+-]+)[^,.;]{0,60}?,? (not|rather than|instead of) (the )?(?P<old4>[\w.@/+-]+)"
    r"|^(\w+( \w+)?: )?(?P<new5>[\w.@/+-]+) over (?P<old5>[\w.@/+-]+)( for\b|[.!]*$)"  # "MockK over Mockito for mocks"
)
_SWITCH = re.compile(
    r"\b(we switched to|switch(ing)? (back )?to|mov(e|ing) (back )?to|migrat(e|ing) to|we're (now )?(on|using)|"
    r"we are (now )?"
    r"(on|using)|we're going with|going with|replac(e|ing) \S+ with)\s+(?P<new>\d+ [\w.@/+-]+|[\w.@/+-]+)"
)
_STOP = re.compile(
    r"(^|[,;:]\s*|\b(please|pls|so|and|you can|can you|just)\s+)(stop|quit|no more|don't|do not|dont|avoid|never)\s+"
    r"(?P<what>(\w+ing|use|using|add|adding|commit|push|run|write|put|leave|make|create|touch|use)\b[^,.;]*)"
)
# the choice of a tool: what to use, what never to
_ALWAYS_USE = re.compile(r"\b(always|only) use (?P<new>[\w.@/+-]+)")
_NEVER_USE = re.compile(
    r"\b(never|don't|do not|no) (use )?(?P<old>[\w.@/+-]+)\s*[.!]?$"
    r"|\b(never|don't|do not) use (?P<old2>[\w.@/+-]+( [\w.@/+-]+)?)"
)
_DONT_START = re.compile(
    r"^(\w+( \w+)?: |in (\w+ ){1,2}(code|tests?|files?),? )?(please |pls |and |also |but )?"
    r"(don't|do not|dont|never|avoid)\b"
)
_FORGET_OLD = re.compile(r"\b(forget (the|about) (?P<old>[\w.@/+-]+)|no longer|not (?P<old2>[\w.@/+-]+) anymore|"
                         r"(?P<old3>[\w.@/+-]+)('s| is| has) gone|drop (?P<old4>[\w.@/+-]+))")  # fmt: skip
# what a run found, not what to do: "no tests found for streaming", "zero errors reported"
_FINDING = re.compile(
    r"(no|zero) ([\w.@/+-]+ ){1,3}(found|given|shown|seen|detected|reported|returned|matched|collected|selected|"
    r"available|left|yet)\b"
)
_TASK_FILE = re.compile(r"(?<![\w*])(?:[\w.-]+/){2,}[\w.-]+\.[A-Za-z0-9]{1,6}\b")  # src/store/cart.ts, not db/x.sql
_INQUIRY = re.compile(
    r"(\w+: )?(please |pls |can you |could you )?(check|see|find out|figure out|verify|confirm|tell me) "
    r"(whether|if|why|what|how|where|which|who)\b"
)
_NARRATES = re.compile(
    r"(\w+: )?(you|we|i|they|he|she|it|someone|somebody)( just| already| also| again| still)? "
    r"(\w+ed|ran|wrote|made|did|left|broke|got|went|took|forgot|kept|built|brought|began|chose|gave|lost|meant|said|"
    r"saw|sent|thought|told|undid)\b"
)  # only the past tense that is not also the present ("we hit the real API in e2e tests" is a norm)
# a prompt that asks for a feature: what follows describes it ("results go in a sidebar", "dry-run by default")
_SPECIFIES = re.compile(r"^(please |pls |can you |could you )?(implement|add|build|create|write|make(?! sure))\b")
_DEICTIC = re.compile(r"\b(this|that|these|those|it|them|(?<!\bin )here|yet|above|below)\b")  # "in here": the repo

_FILLER: Final = frozenset(
    {
        "always", "never", "please", "pls", "use", "using", "used", "uses", "from", "now", "going", "forward", "future",
        "prefer", "don't", "dont", "do", "not", "instead", "rather", "than", "over", "stop", "avoid", "make", "sure",
        "you", "your", "we", "our", "us", "i", "i'd", "i'm", "me", "my", "the", "a", "an", "to", "of", "in", "on",
        "for", "and", "or", "but", "it", "its", "it's", "this", "that", "these", "those", "is", "are", "be", "with",
        "when", "here", "there", "repo", "repository", "project", "codebase", "also", "just", "every", "each",
        "time", "any", "more", "anymore", "again", "should", "must", "need", "want", "like", "let's", "lets",
        "ok", "okay", "so", "then", "by", "as", "at", "all", "no", "can", "will", "you'll", "we're",
        "remember", "thing", "stuff", "one", "way", "convention", "rule", "style", "team", "move", "moving",
        "switch", "back", "actually", "forget", "about", "go", "get", "keep", "before", "after", "into", "out",
        "up", "if", "else", "what", "which", "who", "how", "why", "where", "s", "t", "via", "etc", "we've", "i've",
        "mandatory", "ever", "say", "said", "saying", "know", "drill", "same", "other", "too", "general", "voted",
        "switched", "work", "first", "needs", "run", "add", "write", "put", "does", "did", "got", "gets", "tell",
        "told", "repeat", "usual", "standing", "order", "instruction", "mean", "anything", "everything",
        "even", "only", "own", "new", "files", "file", "things", "don", "re", "ve", "ll", "let", "won't",
        "isn't", "aren't", "can't", "you're", "they're", "that's", "we'll", "i'll", "gone", "still", "really",
        "much", "very", "count", "three", "two", "them", "they", "their", "anywhere",
    }
)  # fmt: skip
_WORD = re.compile(r"[a-z0-9][a-z0-9.@/+#'’-]*[a-z0-9+#]|[a-z0-9]")


def _terms(text: str) -> tuple[str, ...]:
    words = (w.strip(".").replace("’", "'") for w in _WORD.findall(text.lower()))
    return tuple(dict.fromkeys(w for w in words if w and w not in _FILLER and not w.isdigit()))


def _sentences(prompt: str) -> list[str]:
    """The prompt's sentences, without code blocks and quotations (inline code stays, between backticks); of a long
    prompt, only its first paragraph (at most :data:`OWN_WORDS` characters)."""
    if len(prompt) > LONG_PROMPT:
        prompt = _PARAGRAPH.split(prompt.strip(), maxsplit=1)[0][:OWN_WORDS]
    text = _QUOTED.sub(" ", _CODE.sub(lambda m: m.group(0) if "\n" not in m.group(0) else " ", prompt))
    text = _BLOCKQUOTE.sub(" ", text)  # someone else's words: a review, a message
    parts = (" ".join(s.split()) for s in _SENTENCES.split(text) if s)
    return [s for s in parts if len(s) > 3]


def _content(sentence: str) -> tuple[str, ...]:
    """Its content terms; inline code always counts (`any` is a term, any is not)."""
    code = [w.lower() for span in _CODE_SPAN.findall(sentence) for w in span.split()]
    return tuple(dict.fromkeys([*code, *_terms(sentence)]))


def _instruction(low: str) -> bool:
    return not (
        low.endswith("?") or _QUESTION_START.search(low) or _ONE_OFF.search(low) or _NOT_AN_INSTRUCTION.search(low)
    )


def _about_work(sentence: str) -> bool:
    return bool(_CODE_LIKE.search(sentence) or _WORK.search(sentence.lower()))


def _changes_something(low: str) -> bool:
    """Whether the sentence opens with a task on something ("refactor ...", "replace ..."); running a command with
    one tool rather than another ("run tests with X rather than Y") is a way of working."""
    task = _TASK_START.search(low)
    return bool(task and task.group(2) != "run")


def _side(found: re.Match[str], name: str) -> str:
    """What a replacement chooses (``new``) or drops (``old``), whichever of its patterns matched."""
    return next((found.group(g) for g in (name, *(f"{name}{n}" for n in range(2, 6))) if found.group(g)), "")


# ---------------------------------------------------------------------- what the learned half sees (core/rule_model)

# the version of :func:`rule_features`: weights fitted on another version are not used (bench/fit_rules.py refits)
FEATURES: Final = 4
_TOKEN = re.compile(r"`[^`]*`|[a-z0-9_][a-z0-9_'’.-]*[a-z0-9_]|[a-z0-9]|[?!:,;]")
_FILE_TOKEN = re.compile(r"/|\.[a-z]{1,5}$")
_MARKS: Final = (
    ("always", _ALWAYS_NEVER), ("lasting", _LASTING), ("convention", _CONVENTION), ("reminder", _REMINDER),
    ("before", _BEFORE), ("every", _EVERY_NEEDS), ("norm", _NORM), ("only", _ONLY), ("team", _TEAM_HABIT),
    ("standing", _STANDING), ("nothing", _NO_THING), ("prefer", _PREFER), ("replace", _REPLACE),
    ("switch", _SWITCH), ("stop", _STOP), ("dont", _DONT_START), ("oneoff", _ONE_OFF),
    ("notinstr", _NOT_AN_INSTRUCTION), ("question", _QUESTION_START), ("describes", _DESCRIBES),
    ("task", _TASK_START), ("specifies", _SPECIFIES), ("deictic", _DEICTIC),
)  # fmt: skip


# Classes of words (``c:``), pairs of them (``cc:``) and the first word's class (``cf:``): what one writer's "because"
# teaches the learned half about another's "since" (FEATURES 3; bench/fit_rules.py's leave-one-set-out over eighteen
# sets, pooled at 0.9: 0.959 / 0.739 without them, 0.961 / 0.750 with them; at 0.85: 0.946 / 0.771, 0.947 / 0.782).
_WORD_CLASSES: Final[dict[str, frozenset[str]]] = {
    "modal": frozenset({"should", "must", "need", "needs", "gotta", "ought", "required", "mandatory", "shall", "have",
                        "has"}),
    "justify": frozenset({"because", "since", "bc", "cause", "cuz", "otherwise", "so", "else"}),
    "team": frozenset({"we", "our", "us", "team", "everyone", "everybody", "nobody", "anyone", "we're", "we've", "ours",
                       "here", "codebase", "repo", "project"}),
    "time": frozenset({"now", "anymore", "henceforth", "forward", "default", "usually", "generally", "days", "onwards",
                       "onward", "moving", "future"}),
    "oneoff": frozenset({"today", "temporarily", "temporary", "tonight", "tomorrow", "currently", "yet"}),
    "neg": frozenset({"no", "not", "don't", "dont", "never", "nothing", "avoid", "stop", "without", "won't", "isn't",
                      "aren't", "can't", "nope"}),
    "polite": frozenset({"please", "pls", "plz", "kindly", "thanks", "thank", "kthx"}),
    "pref": frozenset({"rather", "prefer", "preference", "fan", "like", "love", "hate", "dislike", "favour", "favor",
                       "lean", "keen"}),
    "norm": frozenset({"convention", "conventions", "style", "rule", "rules", "policy", "standard", "practice", "habit",
                       "pattern", "guideline", "agreed", "settled", "decided", "way"}),
    "only": frozenset({"only", "exclusively", "solely", "just"}),
    "you": frozenset({"you", "you've", "you're", "your"}),
    "i": frozenset({"i", "i'd", "i'm", "i've", "me", "my"}),
    "ask": frozenset({"could", "would", "can", "mind", "possible"}),
}  # fmt: skip
# each word's classes, in the order above (the first is the class of a sentence's first word)
_CLASSES_OF: Final = {
    word: tuple(name for name, members in _WORD_CLASSES.items() if word in members)
    for word in frozenset().union(*_WORD_CLASSES.values())
}
_CLASS_PHRASES: Final = (
    ("oneoff_phrase", re.compile(
        r"\b(this time|for now|this pr|this run|this branch|this session|right now|for this|just this|for the moment|"
        r"this once|in this (pr|commit|ticket))\b"
    )),
    ("you_did", re.compile(
        r"\byou( just| again)? (\w+ed|did|ran|wrote|made|put|left|forgot|broke|went|brought|kept|built|got)\b"
    )),
    ("again", re.compile(
        r"\b(again|once more|already told|as i said|we talked|we've been over|third time|second time|how many times)\b"
    )),
    ("past", re.compile(r"\b(was|were|had|did|yesterday|last (week|time|night|month))\b")),
)  # fmt: skip


def _classes(words: list[str], low: str) -> set[str]:
    """The classes of a sentence's words (as :func:`_token` gives them) and phrases (``low``: the sentence in lower
    case), with its length's."""
    found = {name for word in words for name in _CLASSES_OF.get(word, ())}
    if any(word.endswith("ed") and len(word) > 4 for word in words):
        found.add("edword")
    if any(word.startswith("<") for word in words):  # inline code, a path, a snake_case name
        found.add("code")
    found.update(name for name, phrase in _CLASS_PHRASES if phrase.search(low))
    n = len(words)
    found.add("len:" + ("s" if n < 6 else "m" if n < 16 else "l" if n < 31 else "xl"))
    return found


def _plain(sentence: str) -> str:
    """The sentence as the marks read it: lower case, trimmed, backticks dropped (inline code reads as words)."""
    return sentence.lower().strip().replace("`", "")


def _token(word: str) -> str:
    """A word as the model sees it: inline code, paths and snake_case names each as one kind of token."""
    if word.startswith("`"):
        return "<code>"
    if _FILE_TOKEN.search(word):
        return "<path>"
    return "<snake>" if "_" in word else word


def rule_features(sentence: str, before: str | None = None, after: str | None = None) -> frozenset[str]:
    """A sentence's features for the learned half of rule detection: its words (``w:``) and their stems (``s:``), its
    pairs of words and of stems with the sentence's start and end (``b:``, ``sb:``), its first word (``first:``), and
    the extractor's marks it carries (``m:``), and the classes of its words (``c:``, ``cc:``, ``cf:``: above); and of
    the prompt's sentences ``before`` and ``after`` it, their classes and marks (``pc:``, ``pm:``, ``nc:``, ``nm:``;
    ``p:none``, ``n:none`` at the prompt's ends): the reason given after a rule, the "just this once" after a one-off.
    The stems carry what one writer's "merges" teaches to another's "merging" (pooled held out at 0.85 in
    ``bench/fit_rules.py``: recall 0.803 → 0.826 at the same precision)."""
    low = _plain(sentence)
    lower = sentence.lower()
    words = _words(lower)
    stemmer = Stemmer.Stemmer("porter", 0)  # (0.3 us to make, a call's own: one must not serve two threads at once)
    stems = [w if w.startswith("<") else stemmer.stemWord(w) for w in words]
    found = {f"w:{w}" for w in words} | {f"s:{w}" for w in stems}
    found.update(f"b:{a}_{b}" for a, b in zip(["^", *words], [*words, "$"], strict=True))
    found.update(f"sb:{a}_{b}" for a, b in zip(["^", *stems], [*stems, "$"], strict=True))
    found.update(f"m:{name}" for name in _marks(low))
    if low.endswith("?"):
        found.add("m:qmark")
    if _about_work(sentence):
        found.add("m:work")
    found.add(f"first:{words[0] if words else ''}")
    classes = _classes(words, lower)
    found.update(f"c:{name}" for name in classes)
    found.update(f"cc:{a}_{b}" for a in classes for b in classes if a < b)
    if words:
        found.add(f"cf:{_CLASSES_OF.get(words[0], ('other',))[0]}")
    for side, other in (("p", before), ("n", after)):
        if other is None:
            found.add(f"{side}:none")
            continue
        near = other.lower()
        found.update(f"{side}c:{name}" for name in _classes(_words(near), near))
        found.update(f"{side}m:{name}" for name in _marks(_plain(other)))
    return frozenset(found)


def _words(lower: str) -> list[str]:
    """A sentence's words (``lower``: in lower case) as the model sees them (:func:`_token`)."""
    return [_token(w) for w in _TOKEN.findall(lower)]


def _marks(low: str) -> list[str]:
    """The names of the extractor's marks a sentence (``low``: as :func:`_plain` gives it) carries."""
    return [name for name, mark in _MARKS if mark.search(low)]


def beside(sentences: list[str], n: int) -> tuple[str | None, str | None]:
    """The sentences just before and after sentence ``n`` of a prompt (None at its ends): what the learned half sees
    beside it."""
    return (sentences[n - 1] if n else None, sentences[n + 1] if n + 1 < len(sentences) else None)


def _askable(sentence: str) -> bool:
    """Whether the learned half may be asked about a sentence the checks let through: not what a run found ("no tests
    found for X"), not what someone did ("you ran npm install again": the complaint around a rule, not the rule), not
    something to find out ("check whether lodash 4.17 fixes it"), not a file this task must leave alone ("don't touch
    package.json"), not a sentence about one file deep in the tree ("make sure src/store/cart.ts still imports it":
    this task's; a rule names a folder or a kind of file)."""
    low = _plain(sentence)
    edits_one = _DONT_EDIT.search(low) and _ONE_FILE.search(sentence)
    inquiry = _INQUIRY.match(low)
    return not (_FINDING.match(low) or _NARRATES.match(low) or inquiry or edits_one or _TASK_FILE.search(sentence))


def _learned(sentence: str, model: rule_model.RuleModel, beside: tuple[str | None, str | None] = (None, None)) -> bool:
    """Whether the learned half takes the sentence as a rule (never with weights fitted on other features); ``beside``:
    the prompt's sentences before and after it."""
    return model.features == FEATURES and model.probability(rule_features(sentence, *beside)) >= model.threshold


def _rule(
    sentence: str,
    model: rule_model.RuleModel,
    reminded: bool = False,
    context: str = "",
    beside: tuple[str | None, str | None] = (None, None),
) -> Rule | None:
    """The rule one sentence states; ``reminded``: another sentence of the prompt says it is a standing rule;
    ``context``: the prompt's sentences before it (a feature being specified, a moment already named); ``beside``: the
    sentences just before and after it (for the learned half). A sentence
    with no mark of lasting is a rule when it replaces one thing by another, stops a habit, or when ``model`` is sure
    enough of it."""
    low = _plain(sentence)
    if not _instruction(low) or _DESCRIBES.search(low):
        return None
    always = _ALWAYS_NEVER.search(low)
    lasting = _LASTING.search(low)
    before = _BEFORE.search(low)
    if before and _DEICTIC.search(low[: before.start()]):
        before = None  # "profile it and tell me where the time goes before changing anything": this task's order
    if _TASK_START.search(low) and _ONE_FILE.search(sentence) and not (always or before or lasting):
        return None  # a task on a file or a symbol ("rename `x` to `y` everywhere", "remove it from a.ts, ... anymore")
    convention = _CONVENTION.search(low)
    prefer = _PREFER.search(low)
    replace = _REPLACE.search(_POLITE.sub("", low))
    switch = _SWITCH.search(low)
    stop = _STOP.search(low)
    stops_using = bool(stop and stop.group("what").startswith("us"))  # "stop using X"
    stopped_habit = bool(stop and stop.group(3) in {"stop", "quit", "no more"})
    gone = _FORGET_OLD.search(low)
    standing, only = _STANDING.search(low), _ONLY.search(low)
    chosen, refused = _ALWAYS_USE.search(low), _NEVER_USE.search(low)
    norms = (_REMINDER, _EVERY_NEEDS, _NORM, _TEAM_HABIT)
    habit = (before or only or standing or any(m.search(low) for m in norms)) or (
        switch and re.search(r"\b(back|we switched)\b", low)
    )
    first_clause = re.sub(r"^(please|pls),\s*", "", low).split(",")[0]
    nothing = _NO_THING.search(first_clause)
    edits_one = _DONT_EDIT.search(low) and _ONE_FILE.search(sentence)
    prohibition = _DONT_START.search(low) and not _DEICTIC.search(first_clause) and not edits_one
    chooses = replace or _WE_USE.search(low) or _WE_USE_FOR.search(low) or switch or standing or stops_using or prefer
    chooses = chooses or before
    if not (chooses or chosen or refused or only or _about_work(sentence)):
        return None  # small talk ("always try something new"), unless it chooses a tool (use X, not Y)
    marked = always or lasting or convention or prefer or habit or reminded or prohibition or nothing
    strong = always or convention or prefer or reminded or prohibition or nothing or before or standing
    weak = not strong and (lasting is None or lasting.group(0) == "by default")
    if marked and weak and (_SPECIFIES.search(context) or _ONE_OFF.search(context)):
        # "add a prune command. dry-run by default", "implement search. results go in a sidebar": the feature
        # asked for; "skip the e2e suite for now. unit tests only": the moment the prompt named
        return None
    if not marked:
        # without a mark of lasting, only a replacement of one thing by another, or a stopped habit about no
        # particular thing ("stop adding docstrings to private helpers", not "stop that"), is taken as a rule
        replaced = (
            replace
            and not _DEICTIC.search(replace.group(0))
            and not _changes_something(low)  # "refactor the parser to use X instead of Y": a task
            and (not _ONE_FILE.search(sentence) or _terms(_side(replace, "old")))  # "use the client from src/api.ts
            and _terms(_side(replace, "new"))  # instead of a new one": this task's (not "use now(), not utcnow()")
        )
        stopped = stop and stopped_habit and not _DEICTIC.search(stop.group("what"))
        if not (replaced or stopped or (switch and gone) or (_askable(sentence) and _learned(sentence, model, beside))):
            return None
    favours: list[str] = []
    rejects: list[str] = []
    if replace:
        favours += _terms(_side(replace, "new"))
        rejects += _terms(_side(replace, "old"))
    if switch:
        favours += _terms(switch.group("new"))
    if gone:
        rejects += _terms(_gone(gone))
    if stop and stops_using:
        rejects += _terms(stop.group("what"))[:2]
    if chosen is not None:
        favours += _terms(chosen.group("new"))
    if refused is not None:
        rejects += _terms(refused.group("old") or refused.group("old2") or "")
    if only is not None:
        favours += _terms(only.group("what"))
    terms = _content(sentence)
    dont = bool(_DONT_START.search(low) or nothing or _NEGATED.search(low)) or (
        always is not None and always.group(3) == "never"
    )
    polarity = "dont" if dont or (stop and not favours and not always) else "do"
    return Rule(
        text=sentence.strip()[:RULE_CHARS],
        polarity=polarity,
        explicit=bool(always or lasting),
        favours=tuple(dict.fromkeys(t for t in favours if t not in rejects)),
        rejects=tuple(dict.fromkeys(rejects)),
        terms=terms,
        stops=stopped_habit and not stops_using,
    )


def _vouches(sentence: str) -> bool:
    """A short sentence that only says the one before is a standing rule: "always.", "that's how we work here"."""
    low = sentence.lower()
    marks = (_ALWAYS_NEVER, _REMINDER, _CONVENTION, _LASTING)
    bare = len(_terms(low)) < 2  # it says nothing of its own ("We use lodash here." is a rule of its own)
    return bare and len(low.split()) <= 8 and _instruction(low) and any(m.search(low) for m in marks)


def _gone(found: re.Match[str]) -> str:
    return next((found.group(g) for g in ("old", "old2", "old3", "old4") if found.group(g)), "")


def rules(prompt: str, model: rule_model.RuleModel | None = None) -> list[Rule]:
    """The rules and preferences ``prompt`` states, one per sentence that states one. A sentence that only says a rule
    is standing ("that's a standing rule", "I keep saying this") vouches for the prompt's first instruction.
    ``model``: the learned half's weights (the shipped ones unless given: ``bench/fit_rules.py`` cross-validates)."""
    model = model or rule_model.shipped()
    sentences = _sentences(prompt)
    found: list[Rule] = []
    for n, sentence in enumerate(sentences):
        around = beside(sentences, n)
        rule: Rule | None = _rule(sentence, model, context=" ".join(sentences[:n]).lower(), beside=around)
        if n > 0 and (rule is None or len(rule.terms) < 2) and _vouches(sentence):  # "that's how we work here"
            rule = _rule(sentences[n - 1], model, reminded=True) or rule
        if rule is not None and rule not in found:
            found.append(rule)
    dropped = [t for s in sentences if (gone := _FORGET_OLD.search(s.lower())) for t in _terms(_gone(gone))]
    if found and dropped:  # "switch back to npm - forget the pnpm thing": the prompt drops what the rule replaces
        first = found[0]
        found[0] = replace(first, rejects=tuple(dict.fromkeys([*first.rejects, *dropped])))
    if found or not any(_REMINDER.search(s.lower()) for s in sentences):
        return found
    vouched = next((r for s in sentences if (r := _rule(s, model, reminded=True)) is not None), None)
    return [vouched] if vouched is not None else []


# ---------------------------------------------------------------------- grouping into insights


@dataclass(frozen=True, slots=True)
class Statement:
    """A rule as stated in one prompt."""

    event_id: int
    citation: str | None
    project: str | None
    session_id: str
    ts: str | None  # ISO-8601
    rule: Rule


@dataclass(slots=True)
class Preference:
    """One preference or rule, and every statement of it."""

    id: str  # pref:<citation of its first statement>
    statements: list[Statement] = field(default_factory=list)
    superseded_by: str | None = None  # the id of the later, contrary preference
    supersedes: list[str] = field(default_factory=list)

    @property
    def latest(self) -> Statement:
        return self.statements[-1]

    @property
    def wording(self) -> Statement:
        """The statement that says it best: the latest of those with the most content words ("pnpm only please." says
        less than the earlier "always use pnpm in this repo, never npm")."""
        most = max(len(s.rule.terms) for s in self.statements)
        return [s for s in self.statements if len(s.rule.terms) == most][-1]

    @property
    def projects(self) -> list[str | None]:
        return list(dict.fromkeys(s.project for s in self.statements))

    @property
    def scope(self) -> str | None:
        """The project it holds in, None when stated in several (it holds everywhere)."""
        projects = self.projects
        return projects[0] if len(projects) == 1 else None

    @property
    def explicit(self) -> bool:
        return any(s.rule.explicit for s in self.statements)

    def favours(self) -> set[str]:
        return {t for s in self.statements for t in s.rule.favours}

    def rejects(self) -> set[str]:
        return {t for s in self.statements for t in s.rule.rejects}

    def terms(self) -> set[str]:
        return {t for s in self.statements for t in s.rule.terms}


SAME_RULE: Final = 0.25  # Jaccard of two statements' stemmed content terms: the same rule (bench/preferences)
SAME_ELSEWHERE: Final = 0.4  # the same rule stated in another project


class _Stems:
    """Stemmed term sets of rules (Porter, as the keyword index stems), computed once per rule."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self._seen: dict[tuple[str, ...], frozenset[str]] = {}

    def __call__(self, terms: Sequence[str]) -> frozenset[str]:
        key = tuple(terms)
        if key not in self._seen:
            self._seen[key] = frozenset(self._stemmer.stemWords(list(terms)))
        return self._seen[key]


COMPARED: Final = 20  # a preference's latest distinct wordings a new statement is compared with


@dataclass(slots=True)
class _Known:
    """A preference's stemmed words, kept up to date as statements join it (what grouping compares)."""

    favours: set[str] = field(default_factory=set)
    rejects: set[str] = field(default_factory=set)
    asked: set[str] = field(default_factory=set)  # the words of its "do" statements
    refused: set[str] = field(default_factory=set)  # the words of its "don't" statements
    all_do: bool = True
    terms: dict[frozenset[str], None] = field(default_factory=dict)  # its statements' distinct words, latest last
    all_terms: set[str] = field(default_factory=set)  # every word of every statement
    projects: set[str | None] = field(default_factory=set)

    def add(self, statement: Statement, stems: _Stems) -> None:
        rule = statement.rule
        self.favours |= stems(rule.favours)
        self.rejects |= stems(rule.rejects)
        (self.asked if rule.polarity == "do" else self.refused).update(stems(rule.terms))
        self.all_do = self.all_do and rule.polarity == "do"
        words = stems(rule.terms)
        self.all_terms |= words
        self.terms.pop(words, None)
        self.terms[words] = None
        while len(self.terms) > COMPARED:
            del self.terms[next(iter(self.terms))]
        self.projects.add(statement.project)


def _similarity(rule: Rule, known: _Known, stems: _Stems) -> float:
    """The best Jaccard similarity of the rule's stemmed terms with a wording of the preference; 1 when both choose the
    same tool. Below :data:`SAME_RULE` (the lowest threshold it is compared with) an upper bound is enough: the share
    of the rule's words found anywhere in the preference."""
    if stems(rule.favours) & known.favours or stems(rule.rejects) & known.rejects:
        return 1.0
    mine = stems(rule.terms)
    bound = len(mine & known.all_terms) / len(mine) if mine else 0.0
    if bound < SAME_RULE:
        return bound
    best = 0.0
    for theirs in known.terms:  # Jaccard (the union's size: the sizes' sum less the intersection's; mine is not empty)
        shared = len(mine & theirs)
        best = max(best, shared / (len(mine) + len(theirs) - shared))
    return best


def _contrary(rule: Rule, known: _Known, stems: _Stems, similarity: float) -> bool:
    """The rule drops all of what the earlier preference chose, or chooses what it refused (a preference that names
    no choice stands for its words), or stops a habit the preference asked for. ``similarity``: the rule's with the
    preference (:func:`_similarity`)."""
    about = similarity >= SAME_RULE
    chose = known.favours or (known.asked if about else set())
    refused = known.rejects or (known.refused if about else set())
    drops, picks = stems(rule.rejects), stems(rule.favours)
    if drops and drops <= chose and not drops <= refused:
        return True
    if picks and picks <= refused and not picks <= chose:
        return True
    return rule.stops and known.all_do and about


class Grouping:
    """Statements grouped into preferences one at a time, in the order they were made: a statement joins the latest
    standing preference it agrees with (same project, or any when it was stated in several); a statement contrary to
    a standing one starts a new preference that supersedes it (both kept). Only preferences sharing a stemmed word
    with the statement are compared (an index of their words). Later statements can be added to it at any time."""

    def __init__(self) -> None:
        self.found: list[Preference] = []
        self._known: list[_Known] = []
        self._by_word: dict[str, set[int]] = {}
        self._stems = _Stems()

    def add(self, statement: Statement) -> None:
        found, known, stems = self.found, self._known, self._stems
        rule = statement.rule
        words = stems(rule.terms) | stems(rule.favours) | stems(rule.rejects)
        near = sorted({n for w in words for n in self._by_word.get(w, ()) if found[n].superseded_by is None})
        similar = {n: _similarity(rule, known[n], stems) for n in near}  # (once each: the most of grouping's time)
        contrary = [
            n for n in near if _near(known[n], statement, similar[n]) and _contrary(rule, known[n], stems, similar[n])
        ]
        here = [
            (similar[n], n)
            for n in near
            if n not in contrary and similar[n] >= (SAME_RULE if _local(known[n], statement) else SAME_ELSEWHERE)
        ]
        if here and not contrary:
            n = max(here)[1]
        else:
            n = len(found)
            found.append(Preference(f"pref:{statement.citation or statement.event_id}"))
            known.append(_Known())
            for old in contrary:
                found[old].superseded_by = found[n].id
                found[n].supersedes.append(found[old].id)
        found[n].statements.append(statement)
        known[n].add(statement, stems)
        for w in words:  # (its words are what the preference's grew by)
            self._by_word.setdefault(w, set()).add(n)


def preferences(statements: Iterable[Statement]) -> list[Preference]:
    """Group statements (in the order they were made) into preferences (:class:`Grouping`)."""
    grouping = Grouping()
    for statement in statements:
        grouping.add(statement)
    return grouping.found


def _local(known: _Known, statement: Statement) -> bool:
    """Stated in the statement's project, or already in several."""
    return statement.project in known.projects or len(known.projects) > 1


def _near(known: _Known, statement: Statement, similarity: float) -> bool:
    """Where a contrary statement supersedes a preference: in its project, or anywhere about the same thing
    (``similarity``: the statement's with the preference, :func:`_similarity`)."""
    return _local(known, statement) or similarity >= SAME_ELSEWHERE


def standing(found: Sequence[Preference], project: str | None) -> list[Preference]:
    """The preferences that hold in ``project`` now (None: in any project): not superseded, stated in it or in several
    projects."""
    return [p for p in found if p.superseded_by is None and (project is None or p.scope in (None, project))]

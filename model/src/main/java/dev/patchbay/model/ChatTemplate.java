package dev.patchbay.model;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import dev.patchbay.engine.model.ChatMessage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Hugging Face chat template (Jinja, from {@code tokenizer_config.json}) rendered with Jinjava, with the variables
 * and settings transformers uses: {@code messages}, {@code bos_token}, {@code eos_token},
 * {@code add_generation_prompt}, {@code raise_exception}, trim_blocks and lstrip_blocks.
 */
public final class ChatTemplate {
    private final String template;
    private final String bosToken;
    private final String eosToken;
    private final Jinjava jinjava;

    public ChatTemplate(String template, String bosToken, String eosToken) {
        this.template = template;
        this.bosToken = bosToken == null ? "" : bosToken;
        this.eosToken = eosToken == null ? "" : eosToken;
        this.jinjava = new Jinjava(JinjavaConfig.newBuilder().withTrimBlocks(true).withLstripBlocks(true).build());
        jinjava.getGlobalContext().registerFunction(
                new ELFunctionDefinition("", "raise_exception", ChatTemplate.class, "raiseException", String.class));
    }

    /** Called by templates that reject a conversation, as transformers' raise_exception does. */
    public static String raiseException(String message) {
        throw new IllegalArgumentException(message);
    }

    public String template() {
        return template;
    }

    /** The template's own raise_exception message when there is one, else Jinjava's. */
    private static String rootMessage(TemplateError err) {
        for (Throwable t = err.getException(); t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException && t.getMessage() != null) return t.getMessage();
        }
        return err.getMessage();
    }

    public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
        List<Map<String, Object>> msgs = new ArrayList<>();
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
        RenderResult result;
        try {
            result = jinjava.renderForResult(template, vars);
        } catch (RuntimeException e) {
            Throwable cause = e;
            while (cause.getCause() != null && !(cause instanceof IllegalArgumentException)) cause = cause.getCause();
            throw new IllegalArgumentException("chat template: " + cause.getMessage(), e);
        }
        for (TemplateError err : result.getErrors()) {
            if (err.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new IllegalArgumentException("chat template: " + rootMessage(err));
            }
        }
        return result.getOutput();
    }
}

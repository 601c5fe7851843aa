package dev.patchbay.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.model.ChatMessage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChatTemplateTest {
    /** Meta's template for Llama 3 Instruct, as its tokenizer_config.json has it. */
    static final String LLAMA3 = "{% set loop_messages = messages %}{% for message in loop_messages %}"
            + "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim"
            + " + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}"
            + "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";

    @TempDir
    Path dir;

    @Test
    void llama3Template() {
        ChatTemplate t = new ChatTemplate(LLAMA3, "<|begin_of_text|>", "<|eot_id|>");
        String out =
                t.render(List.of(new ChatMessage("system", "Be brief."), new ChatMessage("user", "  Hello \n")), true);
        assertThat(out)
                .isEqualTo("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
                        + "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                        + "<|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(t.render(List.of(new ChatMessage("user", "x")), false)).endsWith("x<|eot_id|>");
    }

    @Test
    void blockTagsAreTrimmedAsTransformersDoes() {
        String template = """
                {% for message in messages %}
                  {% if message['role'] == 'user' %}
                [INST] {{ message['content'] }} [/INST]
                  {% else %}
                {{ message['content'] }}{{ eos_token }}
                  {% endif %}
                {% endfor %}""";
        ChatTemplate t = new ChatTemplate(template, "<s>", "</s>");
        String out = t.render(List.of(new ChatMessage("user", "Hi"), new ChatMessage("assistant", "Hello")), false);
        assertThat(out).isEqualTo("[INST] Hi [/INST]\nHello</s>\n");
    }

    @Test
    void raiseExceptionRejectsTheConversation() {
        String template = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
                + "{% endif %}{% for m in messages %}{{ m['content'] }}{% endfor %}";
        ChatTemplate t = new ChatTemplate(template, "<s>", "</s>");
        assertThat(t.render(List.of(new ChatMessage("user", "ok")), false)).isEqualTo("ok");
        assertThatThrownBy(() -> t.render(List.of(new ChatMessage("system", "no")), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("System role not supported");
    }

    @Test
    void modelRendersItsOwnTemplateFromTokenizerConfig() throws Exception {
        ModelGenerator.writeModel(dir, ModelGenerator.Spec.tiny());
        try (LlamaModel m = LlamaModel.load(dir, 8, 4, 1, 1, null)) {
            String prompt = m.renderChat(
                    List.of(new ChatMessage("system", "You are terse."), new ChatMessage("user", " Hi! ")), true);
            assertThat(prompt)
                    .isEqualTo("<|begin_of_text|><|im_start|>system\nYou are terse.<|im_end|>\n"
                            + "<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n");
            int[] ids = m.tokenizer().encode(prompt);
            assertThat(ids[0]).isEqualTo(m.tokenizer().bosTokenId());
            assertThat(m.tokenizer().eosTokenId()).isEqualTo(m.tokenizer().tokenId("<|im_end|>"));
            assertThat(m.dtype()).isEqualTo("float32");
        }
    }
}

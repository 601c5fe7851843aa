package dev.patchbay.launcher.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * One OpenAI request of the kit: completions or chat, streamed or not, for one model, and a judgement of the answer
 * as a client library would make it (a JSON body with choices, or server-sent events ending in {@code [DONE]}).
 */
record OpenAiCall(Kind kind, String model, boolean stream, int maxTokens, String prompt) {
    private static final ObjectMapper JSON = new ObjectMapper();

    enum Kind {
        COMPLETION("/v1/completions"),
        CHAT("/v1/chat/completions");

        final String path;

        Kind(String path) {
            this.path = path;
        }
    }

    /** What came back. {@code problem} is null when the answer is what a client expects. */
    record Answer(OpenAiCall call, int status, String body, String problem) {
        boolean ok() {
            return problem == null;
        }

        /** {@code usage.prompt_tokens} of a JSON answer, or -1. */
        int promptTokens() {
            try {
                return JSON.readTree(body).path("usage").path("prompt_tokens").asInt(-1);
            } catch (IOException e) {
                return -1;
            }
        }
    }

    String body() {
        ObjectNode body = JSON.createObjectNode()
                .put("model", model)
                .put("max_tokens", maxTokens)
                .put("ignore_eos", true)
                .put("stream", stream);
        if (kind == Kind.CHAT) {
            body.putArray("messages").addObject().put("role", "user").put("content", prompt);
        } else {
            body.put("prompt", prompt);
        }
        return body.toString();
    }

    String describe() {
        return (stream ? "streamed " : "") + (kind == Kind.CHAT ? "chat" : "completion") + " for " + model;
    }

    Answer send(HttpClient http, URI base) throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(kind.path))
                .timeout(Duration.ofMinutes(2))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body()))
                .build();
        HttpResponse<String> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return new Answer(this, 0, "", "no answer: " + e);
        }
        return new Answer(this, response.statusCode(), response.body(), judge(response));
    }

    private String judge(HttpResponse<String> response) {
        if (response.statusCode() != 200) {
            return "status " + response.statusCode() + ": " + abbreviate(response.body());
        }
        try {
            return stream ? judgeEvents(response.body()) : judgeJson(JSON.readTree(response.body()));
        } catch (IOException e) {
            return "not JSON: " + abbreviate(response.body());
        }
    }

    private String judgeJson(JsonNode answer) {
        JsonNode choices = answer.path("choices");
        if (!choices.isArray() || choices.isEmpty()) {
            return "no choices: " + abbreviate(answer.toString());
        }
        JsonNode first = choices.get(0);
        boolean hasText = kind == Kind.CHAT ? first.path("message").has("content") : first.has("text");
        return hasText ? null : "a choice without text: " + abbreviate(first.toString());
    }

    private String judgeEvents(String body) throws IOException {
        int events = 0;
        boolean done = false;
        for (String line : body.lines().toList()) {
            if (!line.startsWith("data:")) {
                continue;
            }
            String data = line.substring("data:".length()).trim();
            if (data.equals("[DONE]")) {
                done = true;
            } else if (done) {
                return "an event after [DONE]";
            } else {
                JsonNode event = JSON.readTree(data);
                if (event.has("error")) {
                    return "an error event: " + abbreviate(data);
                }
                events++;
            }
        }
        if (!done) {
            return "the stream did not end with data: [DONE] (" + events + " events)";
        }
        return events == 0 ? "no events before [DONE]" : null;
    }

    private static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }
}

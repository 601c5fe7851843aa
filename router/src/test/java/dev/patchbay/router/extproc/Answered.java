package dev.patchbay.router.extproc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.io.IOException;
import java.util.List;

/** Reads what the external processor answered. */
final class Answered {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Answered() {}

    /** The common part of a request headers or request body answer. */
    static CommonResponse common(ProcessingResponse answer) {
        assertThat(answer.hasRequestHeaders() || answer.hasRequestBody())
                .as("a request answer: " + answer)
                .isTrue();
        return answer.hasRequestHeaders()
                ? answer.getRequestHeaders().getResponse()
                : answer.getRequestBody().getResponse();
    }

    /**
     * The destinations answered, after checking that the header and the {@code envoy.lb} metadata carry the same
     * value, as the protocol requires.
     */
    static String destination(ProcessingResponse answer) {
        String header = header(answer, PickerProtocol.DESTINATION_KEY);
        String metadata = answer.getDynamicMetadata()
                .getFieldsOrThrow(PickerProtocol.LB_NAMESPACE)
                .getStructValue()
                .getFieldsOrThrow(PickerProtocol.DESTINATION_KEY)
                .getStringValue();
        assertThat(header)
                .as("the header and the metadata entry must not differ")
                .isEqualTo(metadata);
        return header;
    }

    /** The value a header mutation sets, or null. */
    static String header(ProcessingResponse answer, String name) {
        HeaderValueOption option = option(answer, name);
        return option == null ? null : option.getHeader().getRawValue().toStringUtf8();
    }

    static HeaderValueOption option(ProcessingResponse answer, String name) {
        List<HeaderValueOption> set = common(answer).getHeaderMutation().getSetHeadersList();
        return set.stream()
                .filter(o -> o.getHeader().getKey().equalsIgnoreCase(name))
                .findFirst()
                .orElse(null);
    }

    /** The HTTP status of an immediate response. */
    static int status(ProcessingResponse answer) {
        assertThat(answer.hasImmediateResponse())
                .as("an immediate response: " + answer)
                .isTrue();
        return answer.getImmediateResponse().getStatus().getCodeValue();
    }

    /** The OpenAI error body of an immediate response. */
    static JsonNode error(ProcessingResponse answer) throws IOException {
        status(answer);
        return JSON.readTree(answer.getImmediateResponse().getBody().toByteArray())
                .get("error");
    }

    static JsonNode json(byte[] body) throws IOException {
        return JSON.readTree(body);
    }
}

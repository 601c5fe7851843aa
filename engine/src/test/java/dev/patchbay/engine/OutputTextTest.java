package dev.patchbay.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.engine.sim.LatencyModel;
import dev.patchbay.engine.sim.SimTokenizer;
import dev.patchbay.engine.sim.SimulatedExecutor.TextMode;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OutputTextTest {
    @TempDir
    Path dir;

    private final SimTokenizer tok = new SimTokenizer();

    @Test
    void tokenizerRoundTripsAnyText() {
        for (String s :
                List.of("the cat sat on the mat", "Grüße, 世界! 🎉", "", "  spaces\tand\nlines", "model adapter")) {
            assertThat(tok.decode(tok.encode(s))).isEqualTo(s);
        }
        assertThat(tok.encode(" the")).hasSize(1);
        assertThat(tok.encode("🎉")).hasSize(4); // one token per UTF-8 byte
    }

    private String echo(String prompt, SamplingParams params, FinishReason[] reason) throws Exception {
        EngineFixture f = new EngineFixture(
                EngineFixture.config().enableLora(false).build(), LatencyModel.ZERO, TextMode.ECHO, dir);
        long id = f.submit(null, tok.encode(prompt), params);
        f.driver.runToCompletion();
        reason[0] = f.last(id).finishReason();
        return f.outputs.get(id).stream().map(RequestOutput::textDelta).collect(Collectors.joining());
    }

    @Test
    void multiByteCharactersSplitAcrossTokensComeOutWhole() throws Exception {
        FinishReason[] r = new FinishReason[1];
        String prompt = "über 🎉 done";
        assertThat(echo(prompt, SamplingParams.greedy(100), r)).isEqualTo(prompt);
        assertThat(r[0]).isEqualTo(FinishReason.STOP); // echo ends with the end-of-sequence token
    }

    @Test
    void stopStringEndsTheRequestAndIsNotReturned() throws Exception {
        FinishReason[] r = new FinishReason[1];
        var params = new SamplingParams(100, 0, 1, -1, null, List.of("sat on"), List.of(), false, 1);
        assertThat(echo("the cat sat on the mat", params, r)).isEqualTo("the cat ");
        assertThat(r[0]).isEqualTo(FinishReason.STOP);
    }

    @Test
    void maxTokensEndsWithLength() throws Exception {
        FinishReason[] r = new FinishReason[1];
        assertThat(echo(" the water called people", SamplingParams.greedy(3), r))
                .isEqualTo(" the water called");
        assertThat(r[0]).isEqualTo(FinishReason.LENGTH);
    }
}

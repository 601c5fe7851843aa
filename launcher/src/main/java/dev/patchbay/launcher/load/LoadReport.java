package dev.patchbay.launcher.load;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/** What a load tool's run measured, as the routing benchmark compares setups by it. */
public interface LoadReport {
    /** The tool and its version, such as {@code aiperf 0.13.0}. */
    String tool();

    /** Requests of the measured phase that ended, successful or failed. */
    int requests();

    /** Of those, the failed ones. */
    int errors();

    /** The rate the measured phase's requests were sent at: (n - 1) over the first to the last send; NaN under 2. */
    double sentRate();

    /** Successful requests per second over the tool's measured time. */
    double requestThroughput();

    /** Time to first token of the successful requests, ms. */
    Ttft ttft();

    /** Every successful request's time to first token in ms, per model (adapter, or the base model). */
    Map<String, List<Double>> ttftMsByModel();

    /** The same as {@link #ttft()} over the requests for any of {@code models} (a tier of adapters, say). */
    default Ttft ttftOf(Collection<String> models) {
        List<Double> values = new ArrayList<>();
        for (String model : models) {
            values.addAll(ttftMsByModel().getOrDefault(model, List.of()));
        }
        return Ttft.of(values);
    }

    /** Requests the tool planned and never sent (null for a tool that sends every request it plans). */
    default Integer unsent() {
        return null;
    }

    /** A few lines of text for a person. */
    String summary();
}

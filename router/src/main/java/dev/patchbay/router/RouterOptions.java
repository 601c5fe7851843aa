package dev.patchbay.router;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pool.EndpointSource;

import java.time.Duration;

/**
 * How to run a {@link Router}.
 *
 * @param host           address to listen on
 * @param port           port to listen on; 0 picks a free one (see {@link Router#port()})
 * @param endpoints      the model servers
 * @param config         scorer weights, thresholds, rewrites
 * @param scrapeInterval how often every endpoint's metrics are read
 * @param staleness      how old an endpoint's data may be before it gets no new requests; also
 *                       the bound on one scrape's duration
 * @param extProcPort    port of the Envoy external processor (gRPC); 0 picks a free one, {@link #NO_EXT_PROC} runs
 *                       none
 */
public record RouterOptions(String host, int port, EndpointSource endpoints, RouterConfig config,
                            Duration scrapeInterval, Duration staleness, int extProcPort) {
    public static final int NO_EXT_PROC = -1;
    public static final Duration DEFAULT_SCRAPE_INTERVAL = Duration.ofMillis(50);
    public static final Duration DEFAULT_STALENESS = Duration.ofMillis(200);

    public RouterOptions {
        if (scrapeInterval.isNegative() || scrapeInterval.isZero()) {
            throw new IllegalArgumentException("scrape interval must be positive");
        }
        if (extProcPort < NO_EXT_PROC || extProcPort > 65_535) {
            throw new IllegalArgumentException("ext_proc port must be 0..65535, got " + extProcPort);
        }
        if (staleness.compareTo(scrapeInterval) < 0) {
            throw new IllegalArgumentException("staleness (" + staleness.toMillis()
                    + " ms) must be at least the scrape interval (" + scrapeInterval.toMillis() + " ms)");
        }
    }

    /** Without an external processor. */
    public RouterOptions(String host, int port, EndpointSource endpoints, RouterConfig config,
                         Duration scrapeInterval, Duration staleness) {
        this(host, port, endpoints, config, scrapeInterval, staleness, NO_EXT_PROC);
    }

    /** Loopback, a free port, default config and timings, no external processor. */
    public static RouterOptions of(EndpointSource endpoints) {
        return new RouterOptions("127.0.0.1", 0, endpoints, RouterConfig.DEFAULT, DEFAULT_SCRAPE_INTERVAL,
                DEFAULT_STALENESS);
    }

    public RouterOptions withConfig(RouterConfig newConfig) {
        return new RouterOptions(host, port, endpoints, newConfig, scrapeInterval, staleness, extProcPort);
    }

    public RouterOptions withTimings(Duration newInterval, Duration newStaleness) {
        return new RouterOptions(host, port, endpoints, config, newInterval, newStaleness, extProcPort);
    }

    public RouterOptions withExtProcPort(int newPort) {
        return new RouterOptions(host, port, endpoints, config, scrapeInterval, staleness, newPort);
    }
}

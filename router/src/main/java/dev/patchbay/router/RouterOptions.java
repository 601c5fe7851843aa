package dev.patchbay.router;

import dev.patchbay.router.config.RouterConfig;
import dev.patchbay.router.pool.EndpointPool;
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
 * @param maxStaleness   how old an endpoint's last good data may be and still be routed on when no endpoint's
 *                       data is within {@code staleness} (see {@link dev.patchbay.router.pool.EndpointPool#candidates});
 *                       at least {@code staleness}
 * @param extProcPort    port of the Envoy external processor (gRPC); 0 picks a free one, {@link #NO_EXT_PROC} runs
 *                       none
 * @param healthPort     a port of its own for the external processor's gRPC health services (the gateway's picker
 *                       has them on 9003), beside the ext_proc port that has them too; {@link #NO_EXT_PROC} for none;
 *                       only with an external processor
 * @param servedModelsInterval how often every endpoint's {@code /v1/models} is read, to send a model only where it
 *                       is listed ({@link dev.patchbay.router.route.ModelCatalog#servedBy}); zero reads none. The
 *                       constructors without it take the config's {@code servedModelsInterval}, else
 *                       {@link #DEFAULT_SERVED_MODELS_INTERVAL}
 * @param extProcFallbacks how many endpoints the external processor names after its first choice, for the data plane
 *                       to retry on (the protocol's fallback list); 0 names one, as Envoy's {@code ORIGINAL_DST}
 *                       cluster needs. Only with an external processor
 */
public record RouterOptions(
        String host,
        int port,
        EndpointSource endpoints,
        RouterConfig config,
        Duration scrapeInterval,
        Duration staleness,
        Duration maxStaleness,
        int extProcPort,
        int healthPort,
        Duration servedModelsInterval,
        int extProcFallbacks) {
    public static final int NO_EXT_PROC = -1;
    public static final Duration DEFAULT_SCRAPE_INTERVAL = Duration.ofMillis(50);
    /**
     * A server's model list changes only when an adapter is loaded or unloaded: once a second costs it nothing, and an
     * adapter loaded at run time is sent requests a second after its load at most.
     */
    public static final Duration DEFAULT_SERVED_MODELS_INTERVAL = Duration.ofSeconds(1);

    public static final Duration DEFAULT_STALENESS = Duration.ofMillis(200);
    /** More fallbacks than this would only make a request that no server has a slot for travel further. */
    public static final int MAX_EXT_PROC_FALLBACKS = 8;

    public static final Duration DEFAULT_MAX_STALENESS = EndpointPool.DEFAULT_MAX_STALENESS;

    public RouterOptions {
        if (scrapeInterval.isNegative() || scrapeInterval.isZero()) {
            throw new IllegalArgumentException("scrape interval must be positive");
        }
        if (extProcPort < NO_EXT_PROC || extProcPort > 65_535) {
            throw new IllegalArgumentException("ext_proc port must be 0..65535, got " + extProcPort);
        }
        if (healthPort < NO_EXT_PROC || healthPort > 65_535) {
            throw new IllegalArgumentException("gRPC health port must be 0..65535, got " + healthPort);
        }
        if (healthPort != NO_EXT_PROC && extProcPort == NO_EXT_PROC) {
            throw new IllegalArgumentException("a gRPC health port needs the external processor (--ext-proc-port)");
        }
        if (staleness.compareTo(scrapeInterval) < 0) {
            throw new IllegalArgumentException("staleness (" + staleness.toMillis()
                    + " ms) must be at least the scrape interval (" + scrapeInterval.toMillis() + " ms)");
        }
        EndpointPool.checkStaleness(staleness, maxStaleness);
        if (servedModelsInterval == null || servedModelsInterval.isNegative()) {
            throw new IllegalArgumentException("the served models interval must be 0 (off) or more");
        }
        if (extProcFallbacks < 0 || extProcFallbacks > MAX_EXT_PROC_FALLBACKS) {
            throw new IllegalArgumentException(
                    "ext_proc fallbacks must be 0.." + MAX_EXT_PROC_FALLBACKS + ", got " + extProcFallbacks);
        }
        if (extProcFallbacks > 0 && extProcPort == NO_EXT_PROC) {
            throw new IllegalArgumentException("fallback endpoints need the external processor (--ext-proc-port)");
        }
    }

    /** The config's {@code servedModelsInterval}, else {@link #DEFAULT_SERVED_MODELS_INTERVAL}. */
    public static Duration servedModelsInterval(RouterConfig config) {
        return config.servedModelsInterval() != null ? config.servedModelsInterval() : DEFAULT_SERVED_MODELS_INTERVAL;
    }

    /** {@link #DEFAULT_MAX_STALENESS}, or {@code staleness} when that is longer. */
    public static Duration defaultMaxStaleness(Duration staleness) {
        return EndpointPool.defaultMaxStaleness(staleness);
    }

    /** Loopback, a free port, default config and timings, no external processor. */
    public static RouterOptions of(EndpointSource endpoints) {
        return builder(endpoints).build();
    }

    /** Options for {@code endpoints}, every other one at its default until set. */
    public static Builder builder(EndpointSource endpoints) {
        return new Builder(endpoints);
    }

    /** These options, to change some. */
    public Builder toBuilder() {
        return new Builder(endpoints)
                .host(host)
                .port(port)
                .config(config)
                .scrapeInterval(scrapeInterval)
                .staleness(staleness)
                .maxStaleness(maxStaleness)
                .extProcPort(extProcPort)
                .healthPort(healthPort)
                .servedModelsInterval(servedModelsInterval)
                .extProcFallbacks(extProcFallbacks);
    }

    /**
     * Builds {@link RouterOptions}: loopback, a free port, the default configuration, the default timings, no
     * external processor; a max staleness left unset follows the staleness ({@link #defaultMaxStaleness}), a served
     * models interval left unset follows the configuration ({@link #servedModelsInterval(RouterConfig)}).
     */
    public static final class Builder {
        private final EndpointSource endpoints;
        private String host = "127.0.0.1";
        private int port;
        private RouterConfig config = RouterConfig.DEFAULT;
        private Duration scrapeInterval = DEFAULT_SCRAPE_INTERVAL;
        private Duration staleness = DEFAULT_STALENESS;
        private Duration maxStaleness;
        private int extProcPort = NO_EXT_PROC;
        private int healthPort = NO_EXT_PROC;
        private Duration servedModelsInterval;
        private int extProcFallbacks;

        private Builder(EndpointSource endpoints) {
            this.endpoints = endpoints;
        }

        public Builder host(String value) {
            host = value;
            return this;
        }

        public Builder port(int value) {
            port = value;
            return this;
        }

        public Builder config(RouterConfig value) {
            config = value;
            return this;
        }

        public Builder scrapeInterval(Duration value) {
            scrapeInterval = value;
            return this;
        }

        public Builder staleness(Duration value) {
            staleness = value;
            return this;
        }

        public Builder maxStaleness(Duration value) {
            maxStaleness = value;
            return this;
        }

        public Builder extProcPort(int value) {
            extProcPort = value;
            return this;
        }

        public Builder healthPort(int value) {
            healthPort = value;
            return this;
        }

        public Builder servedModelsInterval(Duration value) {
            servedModelsInterval = value;
            return this;
        }

        public Builder extProcFallbacks(int value) {
            extProcFallbacks = value;
            return this;
        }

        public RouterOptions build() {
            return new RouterOptions(
                    host,
                    port,
                    endpoints,
                    config,
                    scrapeInterval,
                    staleness,
                    maxStaleness != null ? maxStaleness : defaultMaxStaleness(staleness),
                    extProcPort,
                    healthPort,
                    servedModelsInterval != null ? servedModelsInterval : RouterOptions.servedModelsInterval(config),
                    extProcFallbacks);
        }
    }
}

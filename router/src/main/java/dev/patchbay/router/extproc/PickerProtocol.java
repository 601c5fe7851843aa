package dev.patchbay.router.extproc;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.pick.EndpointState;
import dev.patchbay.router.proxy.ProxyHandler;
import dev.patchbay.router.scrape.LoraPlacement;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The Endpoint Picker Protocol's names and the metadata shapes they travel in: the subset hint the data plane sends
 * with a request, the destination list the picker answers with (a header and {@code envoy.lb} dynamic metadata with
 * the same value), and the endpoint the data plane reports served the response.
 */
public final class PickerProtocol {
    public static final String DESTINATION_KEY = ProxyHandler.DESTINATION_HEADER;
    public static final String LB_NAMESPACE = "envoy.lb";
    public static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
    public static final String SUBSET_KEY = "x-gateway-destination-endpoint-subset";
    public static final String SERVED_KEY = "x-gateway-destination-endpoint-served";

    private PickerProtocol() {}

    /**
     * The endpoints a ranking offers the data plane, best first: the first-ranked and at most {@code fallbacks} more.
     * The protocol allows the list, but Envoy's ORIGINAL_DST cluster, which the gateway's and llm-d's reference
     * Envoy configurations route with, takes exactly one {@code ip:port} from the header and fails the request (503,
     * "no healthy upstream") on a list; its override_host load balancing takes the list and retries down it. So
     * fallbacks are off unless asked for ({@code route --ext-proc-fallbacks}).
     */
    static List<EndpointState> offered(List<EndpointState> ranked, int fallbacks) {
        return List.copyOf(ranked.subList(0, Math.min(1 + fallbacks, ranked.size())));
    }

    /**
     * As {@link #offered(List, int)} for a request that may be refused for want of a slot: a fallback is named only
     * where the adapter has as cheap a place as at the first-ranked endpoint ({@link #noDearer}). Envoy retries a
     * refusal at once; a retry onto a server that must load the adapter from storage costs more than waiting where
     * the adapter was going to run.
     */
    static List<EndpointState> offeredForSlot(List<EndpointState> ranked, int fallbacks, String adapter) {
        if (ranked.isEmpty()) {
            return List.of();
        }
        LoraPlacement first = LoraPlacement.of(ranked.getFirst().metrics(), adapter);
        return Stream.concat(
                        Stream.of(ranked.getFirst()),
                        ranked.stream()
                                .skip(1)
                                .filter(next -> noDearer(LoraPlacement.of(next.metrics(), adapter), first))
                                .limit(fallbacks))
                .toList();
    }

    /**
     * A place that can start the adapter at once and costs no more than {@code first}: placements are ordered
     * cheapest first, and a queue (for a slot, or for the adapter's own waiting requests) is no place to retry on.
     */
    static boolean noDearer(LoraPlacement placement, LoraPlacement first) {
        return placement != LoraPlacement.QUEUED
                && placement != LoraPlacement.ALL_SLOTS_BUSY
                && placement.ordinal() <= first.ordinal();
    }

    /** {@code ip:port[,ip:port...]} in rank order: the value of both the header and the metadata entry. */
    static String destinationValue(List<EndpointState> offered) {
        return offered.stream().map(s -> s.endpoint().address()).collect(Collectors.joining(","));
    }

    /** {@code {"envoy.lb": {"x-gateway-destination-endpoint": value}}}. */
    static Struct lbMetadata(String value) {
        Struct inner = Struct.newBuilder()
                .putFields(
                        DESTINATION_KEY,
                        Value.newBuilder().setStringValue(value).build())
                .build();
        return Struct.newBuilder()
                .putFields(
                        LB_NAMESPACE, Value.newBuilder().setStructValue(inner).build())
                .build();
    }

    /**
     * The subset hint's endpoints, or empty when the data plane sent none. The proposal's shape is a list of
     * {@code ip:port} strings; one comma-separated string is read too. An entry that is no {@code host:port} matches
     * no endpoint, so a hint of only such entries leaves nothing to pick, as an empty one does.
     */
    static Optional<Set<Endpoint>> subset(Metadata context) {
        Struct hint = context.getFilterMetadataMap().get(SUBSET_NAMESPACE);
        if (hint == null || !hint.containsFields(SUBSET_KEY)) {
            return Optional.empty();
        }
        Value listed = hint.getFieldsOrThrow(SUBSET_KEY);
        Set<Endpoint> allowed = new HashSet<>();
        if (listed.hasListValue()) {
            for (Value v : listed.getListValue().getValuesList()) {
                parse(v.getStringValue()).ifPresent(allowed::add);
            }
        } else {
            for (String part : listed.getStringValue().split(",")) {
                parse(part).ifPresent(allowed::add);
            }
        }
        return Optional.of(allowed);
    }

    /** The endpoint the data plane reports served the request, when this message carries the report. */
    static Optional<Endpoint> served(Metadata context) {
        Struct lb = context.getFilterMetadataMap().get(LB_NAMESPACE);
        if (lb == null || !lb.containsFields(SERVED_KEY)) {
            return Optional.empty();
        }
        return parse(lb.getFieldsOrThrow(SERVED_KEY).getStringValue());
    }

    private static Optional<Endpoint> parse(String address) {
        try {
            return Optional.of(Endpoint.parse(address));
        } catch (IllegalArgumentException notAnEndpoint) {
            return Optional.empty();
        }
    }
}

package dev.patchbay.launcher.conformance;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.patchbay.router.extproc.EnvoyFrames;
import dev.patchbay.router.extproc.PickerProtocol;
import dev.patchbay.router.pick.Endpoint;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Checks that speak to the picker itself, over its ext_proc gRPC port, with the messages Envoy sends in the
 * gateway's reference mode (full-duplex streamed bodies): what the protocol asks of the answer, seen without a data
 * plane that might hide a mistake (Envoy reads only the header, so a disagreeing metadata entry goes unnoticed there).
 */
public final class WireChecks {
    public static final String HEALTH = "health";
    public static final String DESTINATION_AGREES = "destination-agrees";
    public static final String BODY_RETURNED = "body-returned";
    public static final String SUBSET_HINT = "subset-hint";
    public static final String SUBSET_NONE_ELIGIBLE = "subset-none-eligible";

    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long one answer of the picker may take. */
    private static final Duration ANSWER_LIMIT = Duration.ofSeconds(30);
    /** An address no pool holds: a subset of only this leaves nothing eligible. */
    private static final String NOWHERE = "192.0.2.1:9";

    private final Endpoint picker;
    private final int healthPort;
    private final List<Endpoint> pool;
    private final String model;

    /**
     * @param healthPort the picker's gRPC health port, or 0 when it serves health on its ext_proc port
     * @param model      a model every server of {@code pool} serves
     */
    public WireChecks(Endpoint picker, int healthPort, List<Endpoint> pool, String model) {
        this.picker = picker;
        this.healthPort = healthPort;
        this.pool = List.copyOf(pool);
        this.model = model;
    }

    public List<CheckResult> run() throws InterruptedException {
        List<CheckResult> results = new ArrayList<>();
        ManagedChannel channel = channel(picker.port());
        ManagedChannel healthChannel = healthPort == 0 ? channel : channel(healthPort);
        try {
            results.add(health(healthChannel));
            Picked plain = pick(channel, null);
            results.add(destinationAgrees(plain));
            results.add(bodyReturned(plain));
            results.add(subsetHint(channel));
            results.add(subsetNoneEligible(channel));
        } finally {
            channel.shutdownNow();
            if (healthChannel != channel) {
                healthChannel.shutdownNow();
            }
        }
        return results;
    }

    private ManagedChannel channel(int port) {
        return Grpc.newChannelBuilderForAddress(picker.host(), port, InsecureChannelCredentials.create())
                .build();
    }

    private CheckResult health(ManagedChannel channel) {
        String requirement = "The picker's gRPC health service reports SERVING for "
                + "envoy.service.ext_proc.v3.ExternalProcessor, which the data plane's health checks ask for.";
        String service = ExternalProcessorGrpc.SERVICE_NAME;
        try {
            ServingStatus status = HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(ANSWER_LIMIT.toSeconds(), TimeUnit.SECONDS)
                    .check(HealthCheckRequest.newBuilder().setService(service).build())
                    .getStatus();
            return CheckResult.of(HEALTH, requirement, status == ServingStatus.SERVING, service + ": " + status);
        } catch (RuntimeException e) {
            return CheckResult.of(HEALTH, requirement, false, service + ": " + e.getMessage());
        }
    }

    /** What the picker answered to one request: destinations as header and metadata, the body it sent back. */
    private record Picked(
            Set<String> headerValues,
            Set<String> metadataValues,
            ByteString bodyReturned,
            boolean bodyEnded,
            int immediateStatus,
            byte[] bodySent,
            String problem) {}

    /** Sends one completion's headers and body in three pieces, and reads the answers up to the body's end. */
    private Picked pick(ManagedChannel channel, String subset) throws InterruptedException {
        byte[] body = ("{\"model\":\"" + model + "\",\"prompt\":\"" + "where to ".repeat(400)
                        + "\",\"max_tokens\":4,\"stream\":false}")
                .getBytes(StandardCharsets.UTF_8);
        BlockingQueue<ProcessingResponse> answers = new LinkedBlockingQueue<>();
        List<Throwable> errors = new ArrayList<>();
        StreamObserver<ProcessingRequest> requests = ExternalProcessorGrpc.newStub(channel)
                .process(new StreamObserver<>() {
                    @Override
                    public void onNext(ProcessingResponse value) {
                        answers.add(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        errors.add(t);
                        answers.add(ProcessingResponse.getDefaultInstance());
                    }

                    @Override
                    public void onCompleted() {}
                });
        List<ProcessingRequest> messages = new ArrayList<>();
        messages.add(EnvoyFrames.FULL_DUPLEX.post(body));
        messages.addAll(EnvoyFrames.chunks(body, body.length / 3, 2 * body.length / 3));
        for (ProcessingRequest message : messages) {
            // Envoy attaches the forwarded metadata to every message of the stream, body chunks included.
            requests.onNext(subset == null ? message : EnvoyFrames.withSubset(message, subset));
        }
        Set<String> headerValues = new LinkedHashSet<>();
        Set<String> metadataValues = new LinkedHashSet<>();
        ByteString returned = ByteString.EMPTY;
        boolean ended = false;
        int immediate = 0;
        String problem = null;
        while (!ended && immediate == 0 && problem == null) {
            ProcessingResponse answer = answers.poll(ANSWER_LIMIT.toSeconds(), TimeUnit.SECONDS);
            if (answer == null) {
                problem = "no answer within " + ANSWER_LIMIT.toSeconds() + " s";
            } else if (!errors.isEmpty()) {
                problem = "the stream failed: " + errors.getFirst().getMessage();
            } else {
                collectMetadata(answer.getDynamicMetadata(), metadataValues);
                if (answer.hasImmediateResponse()) {
                    immediate = answer.getImmediateResponse().getStatus().getCodeValue();
                } else if (answer.hasRequestHeaders()) {
                    collectHeaders(answer.getRequestHeaders().getResponse(), headerValues);
                } else if (answer.hasRequestBody()) {
                    CommonResponse common = answer.getRequestBody().getResponse();
                    collectHeaders(common, headerValues);
                    var mutation = common.getBodyMutation();
                    returned = returned.concat(mutation.getStreamedResponse().getBody());
                    ended = mutation.getStreamedResponse().getEndOfStream();
                }
            }
        }
        requests.onCompleted();
        return new Picked(headerValues, metadataValues, returned, ended, immediate, body, problem);
    }

    private static void collectHeaders(CommonResponse response, Set<String> into) {
        for (HeaderValueOption option : response.getHeaderMutation().getSetHeadersList()) {
            if (option.getHeader().getKey().equalsIgnoreCase(PickerProtocol.DESTINATION_KEY)) {
                ByteString raw = option.getHeader().getRawValue();
                into.add(raw.isEmpty() ? option.getHeader().getValue() : raw.toStringUtf8());
            }
        }
    }

    private static void collectMetadata(Struct metadata, Set<String> into) {
        Value lb = metadata.getFieldsOrDefault(PickerProtocol.LB_NAMESPACE, null);
        if (lb == null) {
            return;
        }
        Value destination = lb.getStructValue().getFieldsOrDefault(PickerProtocol.DESTINATION_KEY, null);
        if (destination != null) {
            into.add(destination.getStringValue());
        }
    }

    private CheckResult destinationAgrees(Picked picked) {
        String requirement = "The picker names the destination in the x-gateway-destination-endpoint header and in "
                + "envoy.lb dynamic metadata, with the same value, every address in the pool.";
        if (picked.problem() != null || picked.immediateStatus() != 0) {
            return CheckResult.of(DESTINATION_AGREES, requirement, false, describe(picked));
        }
        boolean agree =
                picked.headerValues().size() == 1 && picked.headerValues().equals(picked.metadataValues());
        boolean inPool = picked.headerValues().stream()
                .flatMap(v -> List.of(v.split(",")).stream())
                .allMatch(address -> pool.stream().anyMatch(e -> e.address().equals(address.trim())));
        return CheckResult.of(DESTINATION_AGREES, requirement, agree && inPool, describe(picked));
    }

    private CheckResult bodyReturned(Picked picked) {
        String requirement = "In full-duplex mode the picker streams the request body back whole, ending it, so the "
                + "data plane forwards what the client sent (the same JSON document; a picker may serialize it anew).";
        if (picked.problem() != null || picked.immediateStatus() != 0) {
            return CheckResult.of(BODY_RETURNED, requirement, false, describe(picked));
        }
        boolean same = picked.bodyEnded() && sameJson(picked.bodyReturned().toByteArray(), picked.bodySent());
        return CheckResult.of(
                BODY_RETURNED,
                requirement,
                same,
                picked.bodySent().length + " bytes sent in 3 pieces, "
                        + picked.bodyReturned().size() + " returned"
                        + (picked.bodyEnded() ? ", ended" : ", not ended"));
    }

    private CheckResult subsetHint(ManagedChannel channel) throws InterruptedException {
        String requirement = "With a subset hint (envoy.lb.subset_hint) the picker picks within it.";
        List<String> seen = new ArrayList<>();
        boolean all = true;
        for (Endpoint only : pool) {
            Picked picked = pick(channel, only.address());
            boolean within = picked.problem() == null
                    && picked.immediateStatus() == 0
                    && picked.headerValues().equals(Set.of(only.address()));
            all &= within;
            seen.add("subset " + only.address() + " -> " + describe(picked));
        }
        return CheckResult.of(SUBSET_HINT, requirement, all, String.join("; ", seen));
    }

    private CheckResult subsetNoneEligible(ManagedChannel channel) throws InterruptedException {
        String requirement = "With a subset hint that names no endpoint of the pool, the picker answers 503.";
        Picked picked = pick(channel, NOWHERE);
        return CheckResult.of(
                SUBSET_NONE_ELIGIBLE,
                requirement,
                picked.immediateStatus() == 503,
                "subset " + NOWHERE + " -> " + describe(picked));
    }

    private static boolean sameJson(byte[] returned, byte[] sent) {
        try {
            return JSON.readTree(returned).equals(JSON.readTree(sent));
        } catch (IOException e) {
            return false;
        }
    }

    private static String describe(Picked picked) {
        if (picked.problem() != null) {
            return picked.problem();
        }
        if (picked.immediateStatus() != 0) {
            return "immediate response " + picked.immediateStatus();
        }
        return "header " + picked.headerValues() + ", metadata " + picked.metadataValues();
    }
}

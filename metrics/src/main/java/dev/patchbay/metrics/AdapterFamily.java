package dev.patchbay.metrics;

import dev.patchbay.engine.FinishReason;
import java.util.List;

/**
 * The per-adapter families, each declared once (name, type, help, extra labels, how samples are read from a row)
 * for both writers: the library path turns each sample into a data point, the cached text path into a line. Besides
 * {@code model_name}, {@code engine} and {@code lora_name}, a sample carries the family's declared labels.
 */
enum AdapterFamily {
    NUM_REQUESTS_RUNNING(
            "vllm:num_lora_requests_running",
            MetricType.GAUGE,
            List.of(),
            "Number of requests of this LoRA adapter in the running set.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.running());
        }
    },
    NUM_REQUESTS_WAITING(
            "vllm:num_lora_requests_waiting",
            MetricType.GAUGE,
            List.of(),
            "Number of requests of this LoRA adapter waiting to be scheduled, preempted ones included.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.waiting());
        }
    },
    ADAPTER_LOADED(
            "vllm:lora_adapter_loaded",
            MetricType.GAUGE,
            List.of("level", "pinned", "rank"),
            "LoRA adapter resident on this server (1), at the fastest tier that holds it: gpu = in a batch slot, "
                    + "cpu = in host memory.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            if (row.level() != null) {
                sink.sample(1, row.level(), Boolean.toString(row.pinned()), Integer.toString(row.rank()));
            }
        }
    },
    ADAPTER_MEMORY_BYTES(
            "vllm:lora_adapter_memory_bytes",
            MetricType.GAUGE,
            List.of(),
            "Bytes of the LoRA adapter's weights where it is resident.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            if (row.resident()) sink.sample(row.memoryBytes());
        }
    },
    REQUESTS(
            "vllm:lora_requests",
            MetricType.COUNTER,
            List.of("finished_reason"),
            "Finished requests of this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            for (FinishReason reason : FinishReason.values()) {
                sink.sample(row.finished().get(reason), reason.label());
            }
        }
    },
    PROMPT_TOKENS(
            "vllm:lora_prompt_tokens",
            MetricType.COUNTER,
            List.of(),
            "Prefill tokens processed for this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.promptTokens());
        }
    },
    GENERATION_TOKENS(
            "vllm:lora_generation_tokens",
            MetricType.COUNTER,
            List.of(),
            "Generation tokens processed for this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.generationTokens());
        }
    };

    /** Receives the samples of one row: a value and the values of the family's declared labels, in order. */
    interface Sink {
        void sample(double value, String... labelValues);
    }

    /** The family name as registered; counters are exposed with {@code _total} appended by the writers. */
    final String metricName;

    final MetricType type;
    /** Label names besides {@code model_name}, {@code engine} and {@code lora_name}. */
    final List<String> labels;

    final String help;

    AdapterFamily(String metricName, MetricType type, List<String> labels, String help) {
        this.metricName = metricName;
        this.type = type;
        this.labels = labels;
        this.help = help;
    }

    abstract void emit(AdapterRow row, Sink sink);

    /** The name on the exposed sample lines of the Prometheus text format. */
    String sampleName() {
        return type.sampleName(metricName);
    }
}

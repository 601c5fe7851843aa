package dev.patchbay.metrics;

import dev.patchbay.engine.FinishReason;

/**
 * The per-adapter families, described once for both writers: the library path turns each sample into a data point,
 * the cached text path into a line. Besides {@code model_name}, {@code engine} and {@code lora_name}, a sample may
 * carry extra labels.
 */
enum AdapterFamily {
    NUM_REQUESTS_RUNNING("vllm:num_lora_requests_running", false,
            "Number of requests of this LoRA adapter in the running set.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.running());
        }
    },
    NUM_REQUESTS_WAITING("vllm:num_lora_requests_waiting", false,
            "Number of requests of this LoRA adapter waiting to be scheduled, preempted ones included.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.waiting());
        }
    },
    ADAPTER_LOADED("vllm:lora_adapter_loaded", false,
            "LoRA adapter resident on this server (1), at the fastest tier that holds it: gpu = in a batch slot, "
                    + "cpu = in host memory.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            if (row.level() != null) {
                sink.sample(1, "level", row.level(), "pinned", Boolean.toString(row.pinned()),
                        "rank", Integer.toString(row.rank()));
            }
        }
    },
    ADAPTER_MEMORY_BYTES("vllm:lora_adapter_memory_bytes", false,
            "Bytes of the LoRA adapter's weights where it is resident.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            if (row.resident()) sink.sample(row.memoryBytes());
        }
    },
    REQUESTS("vllm:lora_requests", true, "Finished requests of this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            for (FinishReason reason : FinishReason.values()) {
                sink.sample(row.finished().get(reason), "finished_reason", reason.label());
            }
        }
    },
    PROMPT_TOKENS("vllm:lora_prompt_tokens", true, "Prefill tokens processed for this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.promptTokens());
        }
    },
    GENERATION_TOKENS("vllm:lora_generation_tokens", true, "Generation tokens processed for this LoRA adapter.") {
        @Override
        void emit(AdapterRow row, Sink sink) {
            sink.sample(row.generationTokens());
        }
    };

    /** Receives the samples of one row: a value and extra label name/value pairs. */
    interface Sink {
        void sample(double value, String... extraLabels);
    }

    /** The family name as registered; counters are exposed with {@code _total} appended by the writers. */
    final String metricName;
    final boolean counter;
    final String help;

    AdapterFamily(String metricName, boolean counter, String help) {
        this.metricName = metricName;
        this.counter = counter;
        this.help = help;
    }

    abstract void emit(AdapterRow row, Sink sink);

    /** The name on the exposed sample lines of the Prometheus text format. */
    String sampleName() {
        return counter ? metricName + "_total" : metricName;
    }
}

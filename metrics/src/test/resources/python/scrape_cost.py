#!/usr/bin/env python3
"""Time prometheus_client (what vLLM serves /metrics with) rendering the series of a Patchbay page.

Same families, labels and buckets as Patchbay's page with N resident adapters: the engine gauges, counters and
histograms, and 10 series per adapter (running, waiting, loaded, memory, 4 finish reasons, prompt and generation
tokens). Between two renders a few adapters change, as in MetricsScrapeBenchmark.

    /usr/bin/python3 scrape_cost.py 10 100 1000
"""
import random
import sys
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

MODEL = "meta-llama/Llama-3.1-8B-Instruct"
SLOTS = 8
TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
        80.0, 160.0, 640.0, 2560.0]
ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
LATENCY = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
           960.0, 1920.0, 7680.0]
ITERATION = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]
REASONS = ["stop", "length", "abort", "error"]


def build(adapters):
    registry = CollectorRegistry()
    base = ["model_name", "engine"]
    lora = base + ["lora_name"]
    for name in ["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                 "vllm:max_gpu_lora_adapters", "vllm:num_gpu_loaded_lora_adapters",
                 "vllm:num_cpu_loaded_lora_adapters"]:
        Gauge(name, name, base, registry=registry).labels(MODEL, "0").set(1)
    for name in ["vllm:num_preemptions", "vllm:prompt_tokens", "vllm:generation_tokens",
                 "vllm:prefix_cache_queries", "vllm:prefix_cache_hits"]:
        Counter(name, name, base, registry=registry).labels(MODEL, "0").inc()
    success = Counter("vllm:request_success", "success", base + ["finished_reason"], registry=registry)
    for r in REASONS:
        success.labels(MODEL, "0", r).inc()
    histograms = []
    for name, buckets in [("vllm:time_to_first_token_seconds", TTFT), ("vllm:inter_token_latency_seconds", ITL),
                          ("vllm:request_time_per_output_token_seconds", ITL),
                          ("vllm:e2e_request_latency_seconds", LATENCY), ("vllm:request_queue_time_seconds", LATENCY),
                          ("vllm:request_inference_time_seconds", LATENCY),
                          ("vllm:request_prefill_time_seconds", LATENCY),
                          ("vllm:request_decode_time_seconds", LATENCY), ("vllm:iteration_tokens_total", ITERATION),
                          ("vllm:request_prompt_tokens", TOKENS), ("vllm:request_generation_tokens", TOKENS),
                          ("vllm:request_max_num_generation_tokens", TOKENS),
                          ("vllm:request_params_max_tokens", TOKENS), ("vllm:request_params_n", [1, 2, 5, 10, 20]),
                          ("vllm:iteration_lora_adapters", [0, 1, 2, 4, 8, 16, 32, 64])]:
        h = Histogram(name, name, base, buckets=buckets, registry=registry).labels(MODEL, "0")
        h.observe(buckets[len(buckets) // 2])
        histograms.append(h)
    per_adapter = {
        "running": Gauge("vllm:num_lora_requests_running", "running", lora, registry=registry),
        "waiting": Gauge("vllm:num_lora_requests_waiting", "waiting", lora, registry=registry),
        "loaded": Gauge("vllm:lora_adapter_loaded", "loaded", lora + ["level", "pinned", "rank"], registry=registry),
        "memory": Gauge("vllm:lora_adapter_memory_bytes", "memory", lora, registry=registry),
        "requests": Counter("vllm:lora_requests", "requests", lora + ["finished_reason"], registry=registry),
        "prompt": Counter("vllm:lora_prompt_tokens", "prompt", lora, registry=registry),
        "generation": Counter("vllm:lora_generation_tokens", "generation", lora, registry=registry),
    }
    names = ["adapter-%04d" % i for i in range(adapters)]
    for i, n in enumerate(names):
        per_adapter["running"].labels(MODEL, "0", n).set(0)
        per_adapter["waiting"].labels(MODEL, "0", n).set(0)
        level = "gpu" if i < SLOTS else "cpu"
        per_adapter["loaded"].labels(MODEL, "0", n, level, "false", "16").set(1)
        per_adapter["memory"].labels(MODEL, "0", n).set(8 << 20)
        for r in REASONS:
            per_adapter["requests"].labels(MODEL, "0", n, r)
        per_adapter["prompt"].labels(MODEL, "0", n)
        per_adapter["generation"].labels(MODEL, "0", n)
    return registry, per_adapter, names, histograms


def main(counts):
    rnd = random.Random(2026)
    for adapters in counts:
        registry, per_adapter, names, histograms = build(adapters)
        iterations = max(20, 20000 // adapters)
        for warm in (True, False):
            start = time.perf_counter()
            size = 0
            for _ in range(iterations):
                # one engine step between two scrapes: the slot adapters run, a few queued ones change
                for n in names[:SLOTS] + rnd.sample(names, min(8, len(names))):
                    per_adapter["running"].labels(MODEL, "0", n).set(rnd.randint(0, 8))
                    per_adapter["waiting"].labels(MODEL, "0", n).set(rnd.randint(0, 3))
                    per_adapter["prompt"].labels(MODEL, "0", n).inc(200)
                for h in histograms:
                    h.observe(0.5)
                size = len(generate_latest(registry))
            elapsed = (time.perf_counter() - start) / iterations
            if not warm:
                print("python prometheus_client %d resident adapters: %.3f ms per scrape, page %d bytes"
                      % (adapters, elapsed * 1000, size))


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100, 1000])

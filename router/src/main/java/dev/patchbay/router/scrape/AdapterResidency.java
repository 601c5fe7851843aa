package dev.patchbay.router.scrape;

/**
 * Where an adapter is resident on a server, read from {@code vllm:lora_adapter_loaded}.
 *
 * @param inSlot true when the adapter is in a batch slot (level "gpu"), false when only in host
 *               memory (level "cpu")
 * @param pinned whether the server pins it so it is never evicted
 * @param rank   the adapter's LoRA rank, 0 when not reported
 */
public record AdapterResidency(boolean inSlot, boolean pinned, int rank) {
    public static final AdapterResidency IN_SLOT = new AdapterResidency(true, false, 0);
    public static final AdapterResidency IN_HOST = new AdapterResidency(false, false, 0);
}

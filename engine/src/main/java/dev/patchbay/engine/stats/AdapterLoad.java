package dev.patchbay.engine.stats;

import java.util.Locale;

/** One adapter brought into a tier: from {@code DISK} into host memory, or from {@code CPU} into a batch slot. */
public record AdapterLoad(String adapter, Source source, double seconds) {
    public enum Source {
        DISK,
        CPU;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}

package dev.patchbay.metrics;

/** The {@code major.minor} part of a version such as {@code 0.1.0} or {@code 0.2}. */
record Version(int major, int minor) {

    static Version parse(String text) {
        String[] parts = text.trim().split("\\.");
        if (parts.length < 2) {
            throw new IllegalArgumentException("version must look like X.Y or X.Y.Z, got '" + text + "'");
        }
        try {
            return new Version(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("version must look like X.Y or X.Y.Z, got '" + text + "'", e);
        }
    }

    /** Minor releases from {@code earlier} to this one; a new major counts as far away. */
    int minorsSince(Version earlier) {
        if (major != earlier.major) return major > earlier.major ? Integer.MAX_VALUE : Integer.MIN_VALUE;
        return minor - earlier.minor;
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }
}

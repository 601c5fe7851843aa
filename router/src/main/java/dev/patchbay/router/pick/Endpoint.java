package dev.patchbay.router.pick;

/** A model server's address. */
public record Endpoint(String host, int port) {
    public Endpoint {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("endpoint host is empty");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint port out of range: " + port);
        }
    }

    /** Parses {@code host:port}; IPv6 hosts go in brackets, as in {@code [::1]:8000}. */
    public static Endpoint parse(String text) {
        String trimmed = text.trim();
        int colon = trimmed.lastIndexOf(':');
        if (colon <= 0 || colon == trimmed.length() - 1) {
            throw new IllegalArgumentException("endpoint must be host:port, got '" + text + "'");
        }
        String host = trimmed.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return new Endpoint(host, Integer.parseInt(trimmed.substring(colon + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("endpoint port is not a number in '" + text + "'");
        }
    }

    /** {@code host:port}, the form used in {@code x-gateway-destination-endpoint}. */
    public String address() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }

    @Override
    public String toString() {
        return address();
    }
}

package dev.patchbay.server.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/** Checks {@code Authorization: Bearer <key>} in constant time, so response timing leaks nothing about the key. */
public final class ApiKey {
    private final byte[] expected;

    public ApiKey(String key) {
        this.expected = ("Bearer " + key).getBytes(StandardCharsets.UTF_8);
    }

    public boolean accepts(String authorizationHeader) {
        byte[] given = authorizationHeader == null
                ? new byte[0]
                : authorizationHeader.trim().getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, given);
    }
}

package dev.patchbay.launcher.field;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Locale;

/**
 * Free loopback ports for programs that cannot be told to take any port and report it (epp, vllm-router). A port
 * found free may be taken by another process before the program binds it; the program then exits, and the start is
 * tried again on other ports.
 */
final class FreePort {
    static final int ATTEMPTS = 3;

    private FreePort() {}

    /** One start on freshly chosen ports. */
    @FunctionalInterface
    interface Attempt<T> {
        T start() throws IOException, InterruptedException;
    }

    static int any() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** Runs {@code attempt} until it succeeds or fails for another reason than a port taken meanwhile. */
    static <T> T retryIfTaken(Attempt<T> attempt) throws IOException, InterruptedException {
        for (int i = 1; ; i++) {
            try {
                return attempt.start();
            } catch (IOException e) {
                if (i == ATTEMPTS
                        || !String.valueOf(e.getMessage())
                                .toLowerCase(Locale.ROOT)
                                .contains("address already in use")) {
                    throw e;
                }
            }
        }
    }
}

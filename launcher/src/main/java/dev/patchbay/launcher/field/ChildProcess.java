package dev.patchbay.launcher.field;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program this JVM started and owns: its output (stdout and stderr together) goes line by line to a log file, and
 * the last lines are kept in memory, all of them when there is no log file; a start can wait for a readiness condition
 * within a bound, and fails at once, with the output's tail, if the program exits first; {@link #close} stops the
 * program and everything it started.
 */
public final class ChildProcess implements AutoCloseable {
    /** Lines kept in memory when the output also goes to a file: enough to say why a start failed. */
    static final int TAIL_LINES = 200;
    /** How long a stopped program may take to exit after SIGTERM before it is killed. */
    static final Duration STOP_GRACE = Duration.ofSeconds(10);

    /** A readiness condition; an exception counts as "not yet" and is reported if the wait fails. */
    @FunctionalInterface
    public interface Probe<T> {
        /** The value once ready, else null. */
        T poll() throws Exception;
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final Writer logWriter;
    private final ArrayDeque<String> lines = new ArrayDeque<>();
    private final Thread pump;

    private ChildProcess(String name, Process process, Path log, Writer logWriter) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.logWriter = logWriter;
        this.pump = Thread.ofPlatform().name(name + "-output").daemon().start(this::pumpOutput);
    }

    /** Starts {@code command} as {@code name}, its output to {@code log} (created or truncated; null: memory only). */
    public static ChildProcess start(String name, List<String> command, Path log) throws IOException {
        return start(name, new ProcessBuilder(command), log);
    }

    /** As {@link #start(String, List, Path)}, with the builder's directory and environment. */
    public static ChildProcess start(String name, ProcessBuilder builder, Path log) throws IOException {
        Writer writer = null;
        if (log != null) {
            Files.createDirectories(log.toAbsolutePath().getParent());
            writer = Files.newBufferedWriter(log, StandardCharsets.UTF_8);
        }
        try {
            Process process = builder.redirectErrorStream(true).start();
            return new ChildProcess(name, process, log, writer);
        } catch (IOException | RuntimeException e) {
            if (writer != null) {
                writer.close();
            }
            throw new IOException("cannot start " + name + " (" + String.join(" ", builder.command()) + ")", e);
        }
    }

    private void pumpOutput() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                synchronized (lines) {
                    lines.addLast(line);
                    if (logWriter != null && lines.size() > TAIL_LINES) {
                        lines.removeFirst();
                    }
                }
                if (logWriter != null) {
                    // Flushed per line, so that the file can be followed while the program runs.
                    logWriter.write(line);
                    logWriter.write('\n');
                    logWriter.flush();
                }
            }
        } catch (IOException ignored) {
            // the program ended, or its log could not be written: the tail in memory still tells
        } finally {
            if (logWriter != null) {
                try {
                    logWriter.close();
                } catch (IOException ignored) {
                    // nothing more to write
                }
            }
        }
    }

    public String name() {
        return name;
    }

    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The log file, or null when the output is kept in memory only. */
    public Path log() {
        return log;
    }

    /** The output's lines so far: all of them without a log file, else the last {@value #TAIL_LINES}. */
    public List<String> lines() {
        synchronized (lines) {
            return new ArrayList<>(lines);
        }
    }

    /** The last {@code n} lines of output, one per line. */
    public String tail(int n) {
        List<String> all = lines();
        return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size()));
    }

    /**
     * Polls {@code probe} (starting at once, backing off to every 100 ms) until it gives a value, and returns it.
     * Fails with an {@link IOException} that names {@code what} and shows the output's tail when the program exits
     * first or {@code limit} passes; the limit only turns a hang into a message.
     */
    public <T> T await(String what, Duration limit, Probe<T> probe) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        long pauseMillis = 1;
        Exception last = null;
        while (true) {
            try {
                T value = probe.poll();
                if (value != null) {
                    return value;
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                last = e;
            }
            if (!process.isAlive()) {
                pump.join(Duration.ofSeconds(2)); // its last words
                throw new IOException(
                        name + " exited with " + process.exitValue() + " before " + what + where() + ":\n" + tail(40));
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IOException(
                        name + " did not " + what + " within " + limit.toSeconds() + " s"
                                + (last == null ? "" : " (last: " + last + ")") + where() + ":\n" + tail(40),
                        last);
            }
            Thread.sleep(pauseMillis);
            pauseMillis = Math.min(100, pauseMillis * 2);
        }
    }

    /** As {@link #await}, for a yes-or-no condition. */
    public void awaitTrue(String what, Duration limit, Probe<Boolean> condition)
            throws IOException, InterruptedException {
        await(what, limit, () -> Boolean.TRUE.equals(condition.poll()) ? Boolean.TRUE : null);
    }

    private String where() {
        return log == null ? "" : " (log " + log + ")";
    }

    /**
     * Stops the program and its descendants: SIGTERM to all (descendants taken before the parent goes, since they are
     * reparented once it exits), then SIGKILL to whatever still runs after {@link #STOP_GRACE}. Safe to call again.
     */
    @Override
    public void close() {
        close(STOP_GRACE);
    }

    /** As {@link #close()}, with {@code grace} between SIGTERM and SIGKILL. */
    public void close(Duration grace) {
        List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
        all.add(process.toHandle());
        all.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + grace.toNanos();
        for (ProcessHandle handle : all) {
            long left = deadline - System.nanoTime();
            try {
                handle.onExit().get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception notYet) {
                // killed below
            }
        }
        all.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
        try {
            process.waitFor(10, TimeUnit.SECONDS); // after SIGKILL: only as long as the kernel takes
            pump.join(Duration.ofSeconds(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + process.pid() + ")";
    }
}

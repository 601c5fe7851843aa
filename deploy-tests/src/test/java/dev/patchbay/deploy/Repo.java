package dev.patchbay.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths in the repository, found from the module's working directory. */
final class Repo {
    private Repo() {}

    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("patchbay")) && Files.isDirectory(d.resolve("deploy"))) {
                return d;
            }
        }
        throw new IllegalStateException("no repository root above " + dir);
    }

    static Path chart() {
        return root().resolve("deploy/helm/patchbay");
    }

    static Path inferencePoolCrd() {
        return root().resolve("deploy/crd/inferencepool-v1.yaml");
    }

    static Path nodeChecks() {
        return root().resolve("deploy-tests/src/test/node");
    }

    static Path testValues(String name) {
        return root().resolve("deploy-tests/src/test/resources").resolve(name);
    }
}

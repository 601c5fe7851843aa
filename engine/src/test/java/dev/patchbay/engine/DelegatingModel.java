package dev.patchbay.engine;

import dev.patchbay.engine.adapter.AdapterSpec;
import dev.patchbay.engine.exec.Batch;
import dev.patchbay.engine.exec.Executor;
import dev.patchbay.engine.exec.LoadedAdapter;
import dev.patchbay.engine.exec.StepResult;
import dev.patchbay.engine.model.ChatMessage;
import dev.patchbay.engine.model.Model;
import dev.patchbay.engine.model.ModelConfig;
import dev.patchbay.engine.model.Tokenizer;
import java.io.IOException;
import java.util.List;

/** A model whose executor forwards to another, so a test can override one call. */
class DelegatingModel implements Model, Executor {
    private final Model inner;

    DelegatingModel(Model inner) {
        this.inner = inner;
    }

    @Override
    public String source() {
        return inner.source();
    }

    @Override
    public ModelConfig config() {
        return inner.config();
    }

    @Override
    public Tokenizer tokenizer() {
        return inner.tokenizer();
    }

    @Override
    public String renderChat(List<ChatMessage> m, boolean g) {
        return inner.renderChat(m, g);
    }

    @Override
    public String dtype() {
        return inner.dtype();
    }

    @Override
    public Executor executor() {
        return this;
    }

    @Override
    public LoadedAdapter loadAdapter(AdapterSpec spec) throws IOException {
        return inner.executor().loadAdapter(spec);
    }

    @Override
    public long modeledLoadNanos(AdapterSpec spec) {
        return 0;
    }

    @Override
    public long activate(int slot, LoadedAdapter a) {
        return inner.executor().activate(slot, a);
    }

    @Override
    public void deactivate(int slot) {
        inner.executor().deactivate(slot);
    }

    @Override
    public StepResult execute(Batch batch) {
        return inner.executor().execute(batch);
    }

    @Override
    public void close() {}
}

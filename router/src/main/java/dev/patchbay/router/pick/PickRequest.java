package dev.patchbay.router.pick;

/**
 * What the picker needs to know about a request.
 *
 * @param model     the model the request will be served with (after any rewrite)
 * @param baseModel true when {@code model} is a base model; LoRA scorers then score every
 *                  endpoint alike
 * @param sheddable true when the request may be refused with 429 under saturation
 */
public record PickRequest(String model, boolean baseModel, boolean sheddable) {
    public static PickRequest adapter(String adapter) {
        return new PickRequest(adapter, false, false);
    }

    public static PickRequest baseModel(String model) {
        return new PickRequest(model, true, false);
    }

    public PickRequest asSheddable() {
        return new PickRequest(model, baseModel, true);
    }
}

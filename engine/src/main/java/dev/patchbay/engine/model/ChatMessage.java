package dev.patchbay.engine.model;

/** One turn of a chat conversation. */
public record ChatMessage(String role, String content) {}

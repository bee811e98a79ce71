package dev.engine;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A GGUF model, mapped read-only (engine_model_load). Read-only once loaded:
 * any number of sessions on any threads may use it at once. close() while it
 * has open sessions is refused (EngineException, status IN_USE) and leaves it
 * open: close the sessions first (try-with-resources does, in reverse order).
 */
public final class Model extends NativeHandle {
  private final int nVocab;
  private final int nCtxTrain;
  private final int bos;
  private final int eos;

  /** Loads the file; a missing or bad file is an EngineException (status MODEL) naming it and the problem. */
  public Model(String path) {
    this(path, null, null);
  }

  /**
   * Loads the file with a repack cache in cacheDir (null: $ENGINE_CACHE_DIR,
   * else none; docs/cold-start.md), so the next load maps the repacked weights
   * instead of repacking them, and progress told as the load goes (null: none).
   */
  public Model(String path, String cacheDir, LoadProgress progress) {
    super("Model", Native.modelLoadEx(Native.utf8(path), cacheDir == null ? null : Native.utf8(cacheDir), progress));
    long h = acquire();
    try {
      int[] info = Native.modelInfo(h);
      nVocab = info[0];
      nCtxTrain = info[1];
      bos = info[2];
      eos = info[3];
    } finally {
      release();
    }
  }

  @Override
  void free(long handle) {
    Native.modelFree(handle);
  }

  /** The engine's version. */
  public static String version() {
    return Native.version();
  }

  /** The built-in chat templates' names ("chatml", "llama3", ...). */
  public static List<String> builtinChatTemplates() {
    return Collections.unmodifiableList(Arrays.asList(Native.builtinChatTemplates()));
  }

  public int nVocab() {
    return nVocab;
  }

  /** The context the model was trained with. */
  public int nCtxTrain() {
    return nCtxTrain;
  }

  /** The begin-of-sequence token, or -1. */
  public int bos() {
    return bos;
  }

  /** The end-of-sequence token, or -1. */
  public int eos() {
    return eos;
  }

  public boolean isEndOfGeneration(int token) {
    long h = acquire();
    try {
      return Native.isEndOfGeneration(h, token);
    } finally {
      release();
    }
  }

  /** The text's tokens, BOS first. */
  public int[] tokenize(String text) {
    return tokenize(text, true, false);
  }

  /** parseSpecial: special tokens' texts (such as "<|im_end|>") become those tokens. */
  public int[] tokenize(String text, boolean addBos, boolean parseSpecial) {
    long h = acquire();
    try {
      return Native.tokenize(h, Native.utf8(text), addBos, parseSpecial);
    } finally {
      release();
    }
  }

  /**
   * A reply read back into its tool calls, in the format the model's chat template shows
   * (engine_chat_parse_tool_calls); the text around them is the content.
   */
  public ParsedReply parseToolCalls(String reply) {
    return parseToolCalls(reply, null);
  }

  /**
   * The same in a named format: hermes, list, llama3, mistral, gemma4, pythonic, functools, qwen3_coder, glm,
   * invoke or none.
   */
  public ParsedReply parseToolCalls(String reply, String format) {
    long h = acquire();
    try {
      byte[][] f = Native.parseToolCalls(h, format == null ? null : Native.utf8(format), Native.utf8(reply));
      java.util.List<Message.ToolCall> calls = new java.util.ArrayList<Message.ToolCall>();
      for (int i = 2; i + 2 < f.length; i += 3) {
        String id = Native.text(f[i]);
        calls.add(new Message.ToolCall(id.isEmpty() ? null : id, Native.text(f[i + 1]), Native.text(f[i + 2])));
      }
      return new ParsedReply(Native.text(f[1]), calls, Native.text(f[0]));
    } finally {
      release();
    }
  }

  /** One token's bytes: a piece of UTF-8 that may end inside a character. */
  public byte[] tokenBytes(int token) {
    long h = acquire();
    try {
      return Native.tokenBytes(h, token);
    } finally {
      release();
    }
  }

  /**
   * The tokens' text as one sequence (engine_detokenize): control tokens give nothing and the
   * leading space SentencePiece puts on the first word is dropped, so detokenize(tokenize(text))
   * is the text. Bytes of ill-formed UTF-8 become U+FFFD.
   */
  public String detokenize(int[] tokens) {
    long h = acquire();
    try {
      return Native.text(Native.detokenize(h, tokens));
    } finally {
      release();
    }
  }

  /** The prompt text of a conversation, rendered with the model's chat template. */
  public String renderChat(List<Message> messages) {
    return renderChat(messages, new ChatOptions());
  }

  /** A template error is an EngineException (status TEMPLATE) with the line and column, or the template's own message. */
  public String renderChat(List<Message> messages, ChatOptions options) {
    Native.Messages m = new Native.Messages(messages);
    long h = acquire();
    try {
      return Native.text(Native.renderChat(h, m.fields, m.callCounts, m.calls, options.strings(),
          options.addGenerationPrompt));
    } finally {
      release();
    }
  }
}

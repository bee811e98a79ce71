package dev.engine;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The native methods (bindings/java/jni, over the C API) and what the classes
 * share to call them. Text crosses as UTF-8 byte arrays, decoded here: JNI's
 * own strings are "modified UTF-8", which mangles characters outside the BMP
 * (emoji) and NUL.
 *
 * The library is libengine_jni.so, found on java.library.path (on Android in
 * the APK's jniLibs), or at the path of the system property dev.engine.library.
 */
final class Native {
  static {
    String path = System.getProperty("dev.engine.library");
    if (path != null && !path.isEmpty()) {
      System.load(path);
    } else {
      System.loadLibrary("engine_jni");
    }
  }

  private Native() {}

  static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  static String text(byte[] utf8) {
    return utf8 == null ? "" : new String(utf8, StandardCharsets.UTF_8);
  }

  static int unsigned(String what, int value) {
    if (value < 0) throw new IllegalArgumentException(what + " must be >= 0, not " + value);
    return value;
  }

  /**
   * Messages as the native code reads them: per message role, content,
   * tool_call_id and name; per message its number of tool calls; per call id,
   * name and arguments (null stands for none).
   */
  static final class Messages {
    final byte[][] fields;
    final int[] callCounts;
    final byte[][] calls;

    Messages(List<Message> messages) {
      fields = new byte[messages.size() * 4][];
      callCounts = new int[messages.size()];
      int nCalls = 0;
      for (Message m : messages) nCalls += m.toolCalls.size();
      calls = new byte[nCalls * 3][];
      int c = 0;
      for (int i = 0; i < messages.size(); i++) {
        Message m = messages.get(i);
        fields[4 * i] = utf8(m.role);
        fields[4 * i + 1] = utf8(m.content);
        fields[4 * i + 2] = utf8(m.toolCallId);
        fields[4 * i + 3] = utf8(m.name);
        callCounts[i] = m.toolCalls.size();
        for (Message.ToolCall call : m.toolCalls) {
          calls[c++] = utf8(call.id);
          calls[c++] = utf8(call.name);
          calls[c++] = utf8(call.arguments);
        }
      }
    }
  }

  /** Receives the reply's pieces from the native generation loop; keeps what the callback throws. */
  static final class TextSink {
    private final TextCallback callback;
    final StringBuilder text = new StringBuilder();
    Throwable error;

    TextSink(TextCallback callback) {
      this.callback = callback;
    }

    // Called by the native code with one piece (whole UTF-8 characters).
    boolean accept(byte[] piece) {
      String s = text(piece);
      text.append(s);
      if (callback == null) return true;
      try {
        return callback.onText(s);
      } catch (Throwable t) {  // handed to the caller of generate, as the cause
        error = t;
        return false;
      }
    }
  }

  // ---- models ----
  static native long modelLoad(byte[] path);

  static native long modelLoadEx(byte[] path, byte[] cacheDir, LoadProgress progress);
  static native void modelFree(long model);
  /** {n_vocab, n_ctx_train, bos, eos} */
  static native int[] modelInfo(long model);
  static native boolean isEndOfGeneration(long model, int token);
  static native int[] tokenize(long model, byte[] text, boolean addBos, boolean parseSpecial);
  static native byte[] tokenBytes(long model, int token);
  static native byte[] detokenize(long model, int[] tokens);
  /** engine_chat_parse_tool_calls (format null: the model's): format, content, then id, name, arguments per call. */
  static native byte[][] parseToolCalls(long model, byte[] format, byte[] reply);
  static native byte[] renderChat(long model, byte[][] fields, int[] callCounts, byte[][] calls, byte[][] options,
      boolean addGenerationPrompt);
  static native String[] builtinChatTemplates();
  static native String version();

  // ---- sessions: each has a stop flag its abort callback reads ----
  /** {session, stop flag} */
  static native long[] sessionCreate(long model, int nCtx, int nBatch, int kvType, int nThreads, byte[] cpus);
  /** Frees the session, and its flag once the session is gone. */
  static native void sessionFree(long session, long flag);
  static native void abort(long flag);
  static native void prefill(long session, long flag, int[] tokens);
  static native long prefillPrompt(long session, long flag, int[] tokens);
  static native void decode(long session, long flag, int token);
  /** The logits into dst (when it has n_vocab floats) or a new array. */
  static native float[] logits(long session, float[] dst);
  static native int nPast(long session);
  static native long nEvaluated(long session);
  static native int[] sessionTokens(long session);
  static native void truncate(long session, int n);
  static native void reset(long session);
  static native void save(long session, byte[] path);
  static native void load(long session, byte[] path);
  /** {prompt tokens, reused tokens} */
  static native long[] prefillChat(long session, long flag, byte[][] fields, int[] callCounts, byte[][] calls,
      byte[][] options);
  /** {tokens evaluated, engine_chat_stop_reason} */
  static native int[] generate(long session, long flag, long sampler, int maxTokens, byte[][] stop, TextSink sink);

  // ---- samplers ----
  /** engine_sampler_default_params: temperature, top_k, top_p, min_p, repeat_penalty, repeat_last_n, seed */
  static native double[] samplerDefaults();
  static native long samplerCreate(float temperature, int topK, float topP, float minP, float repeatPenalty,
      int repeatLastN, int seed);
  static native void samplerFree(long sampler);
  static native int sample(long sampler, long session);
  static native void samplerAccept(long sampler, int token);
  /** engine_sampler_set_grammar (root may be null), or with jsonSchema engine_sampler_set_json_schema; text null removes. */
  static native void samplerSetGrammar(long sampler, long model, byte[] text, byte[] root, boolean jsonSchema);
  /** engine_sampler_set_tool_grammar (format null: the model's). */
  static native void samplerSetToolGrammar(long sampler, long model, byte[] tools, byte[] format);
}

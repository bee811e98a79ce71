package dev.engine;

/**
 * A failed engine call: the engine's status and its message (engine_last_error(),
 * which names the file, token or option at fault). Unchecked, as the engine's
 * errors are a program's or a file's, not conditions to declare on every call.
 */
public class EngineException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The engine's statuses (engine_status in engine.h), and the binding's own CALLBACK. */
  public enum Status {
    OK(0),
    INVALID_ARGUMENT(1),
    INVALID_HANDLE(2),
    MODEL(3),
    CONTEXT_FULL(4),
    BUFFER_TOO_SMALL(5),
    BUSY(6),
    IN_USE(7),
    STATE(8),
    OUT_OF_MEMORY(9),
    INTERNAL(10),
    ABORTED(11),
    FILE(12),
    TEMPLATE(13),
    /** The load's progress callback cancelled it. */
    CANCELLED(14),
    /** Not the engine's: the app's text callback threw; getCause() is what it threw. */
    CALLBACK(-1);

    public final int code;

    Status(int code) {
      this.code = code;
    }

    static Status of(int code) {
      for (Status s : values()) {
        if (s.code == code) return s;
      }
      return INTERNAL;
    }
  }

  private final Status status;

  public EngineException(Status status, String message) {
    super(message);
    this.status = status;
  }

  public EngineException(Status status, String message, Throwable cause) {
    super(message, cause);
    this.status = status;
  }

  public Status status() {
    return status;
  }

  /** Built by the native code: the status and engine_last_error()'s UTF-8 bytes. */
  static EngineException fromNative(int code, byte[] message) {
    return new EngineException(Status.of(code), Native.text(message));
  }
}

package dev.engine;

/**
 * An engine handle owned by a Java object. Every native call holds the handle
 * between acquire() and release(), so close() cannot free it while a call of
 * another thread is using it: close() then refuses (BUSY) instead of freeing
 * memory a call still reads. After close(), acquire() throws
 * IllegalStateException: using a closed object is an error, never a crash.
 */
abstract class NativeHandle implements AutoCloseable {
  private final String kind;
  private long handle;
  private int users;

  NativeHandle(String kind, long handle) {
    this.kind = kind;
    this.handle = handle;
  }

  final synchronized long acquire() {
    if (handle == 0) throw new IllegalStateException(kind + " is closed");
    users++;
    return handle;
  }

  final synchronized void release() {
    users--;
  }

  final synchronized boolean isClosed() {
    return handle == 0;
  }

  /** Frees the native handle; throws EngineException (and keeps it) when the engine refuses. */
  abstract void free(long handle);

  /**
   * Frees the native object. Closing twice does nothing. Refused with an
   * EngineException while another thread is in a call on it (BUSY), and for a
   * Model while it has open sessions (IN_USE): the object stays open then.
   */
  @Override
  public final synchronized void close() {
    if (handle == 0) return;
    if (users > 0) {
      throw new EngineException(EngineException.Status.BUSY,
          kind + " is in use by another thread: close it when that call has returned");
    }
    free(handle);
    handle = 0;
  }
}

package dev.engine;

/**
 * Receives the reply as it is generated, one piece at a time: whole UTF-8
 * characters, never a stop string's text. Called on the thread that generates.
 */
@FunctionalInterface
public interface TextCallback {
  /** Returns false to stop the reply. An exception stops it too and is thrown by generate as the cause of an EngineException (status CALLBACK). */
  boolean onText(String piece);
}

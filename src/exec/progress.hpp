#pragma once
// Progress of split executions between begin() and end().
//
// MPI moves a message only while some call of its process drives the library's progress
// engine. Between begin() and end() the caller computes and calls nothing, so a message that
// needs more than one round with its peer (a rendezvous, the fragments of a large message over
// TCP) waits for end(). REDIST_PROGRESS=thread runs, from begin() to end(), a thread that
// calls MPI_Iprobe on the plan's communicator every kProgressInterval and sleeps in between:
// where a network moves the bytes (another node), the transfer then runs while the caller
// computes. Where processors copy the bytes (one node: shared memory, cross-memory reads) it
// can only take their time from the computation, so it is off by default.

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

namespace redist {

enum class ProgressMode : std::uint8_t { none, thread };

/// REDIST_PROGRESS = none (default) | thread.
ProgressMode progress_mode();
/// "" when REDIST_PROGRESS is unset, empty, `none`, or `thread` under MPI_THREAD_MULTIPLE;
/// else why not (plans refuse to be made).
std::string progress_environment_error();

/// One turn of MPI's progress engine on `comm`: an MPI_Iprobe with a tag no message of redist
/// carries, so nothing is matched. Its result is ignored: a failure of a message shows in the
/// calls that move it.
void drive_progress(MPI_Comm comm);

/// How often the progress thread enters MPI: at 1 Gbit/s a socket's 4 MiB buffer drains in
/// 32 ms; each wake costs a few microseconds of the computation's processor.
inline constexpr std::chrono::microseconds kProgressInterval{200};

/// The thread of one execution in flight.
class ProgressThread {
public:
  /// Start calling MPI_Iprobe on `comm` (with a tag no message of redist carries, so nothing is
  /// matched) until stop(). Needs MPI_THREAD_MULTIPLE. Where the system refuses a thread,
  /// nothing runs (the messages then move inside end(), as without REDIST_PROGRESS).
  void start(MPI_Comm comm);
  /// Stop the thread and wait for it; nothing when none runs.
  void stop();

private:
  static void probe_until_stopped(const std::stop_token &stop, MPI_Comm comm);
  std::jthread thread_;
};

} // namespace redist

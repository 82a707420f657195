#include "progress.hpp"

#include "environment.hpp"

#include <condition_variable>
#include <mutex>
#include <system_error>

namespace redist {

namespace {

// MPI guarantees tags up to 32767; the executor's are kTag (7411) and a few above it.
constexpr int kProbeTag = 32767;

environment::Choice progress_choice() {
  return environment::choice("REDIST_PROGRESS", {"none", "thread"},
                             "unknown (known: none, thread)");
}

} // namespace

void drive_progress(MPI_Comm comm) {
  int flag = 0;
  (void)MPI_Iprobe(MPI_ANY_SOURCE, kProbeTag, comm, &flag, MPI_STATUS_IGNORE);
}

ProgressMode progress_mode() {
  const environment::Choice c = progress_choice();
  return c.index && *c.index == 1 ? ProgressMode::thread : ProgressMode::none;
}

std::string progress_environment_error() {
  const environment::Choice c = progress_choice();
  if (!c.error.empty() || !c.index || *c.index != 1) {
    return c.error;
  }
  int level = MPI_THREAD_SINGLE;
  if (MPI_Query_thread(&level) != MPI_SUCCESS || level != MPI_THREAD_MULTIPLE) {
    return environment::error("REDIST_PROGRESS", "thread",
                              "needs MPI initialised with MPI_THREAD_MULTIPLE (MPI_Init_thread)");
  }
  return "";
}

void ProgressThread::start(MPI_Comm comm) {
  stop();
  // The exchange is posted by now: a refused thread must not fail the execution.
  try {
    thread_ = std::jthread(probe_until_stopped, comm);
  } catch (const std::system_error &) {
    thread_ = {};
  }
}

void ProgressThread::probe_until_stopped(const std::stop_token &stop, MPI_Comm comm) {
  std::mutex mutex;
  std::condition_variable_any wake; // woken only by stop()
  std::unique_lock lock(mutex);
  while (!stop.stop_requested()) {
    drive_progress(comm);
    wake.wait_for(lock, stop, kProgressInterval, [] { return false; });
  }
}

void ProgressThread::stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    thread_.join();
  }
}

} // namespace redist

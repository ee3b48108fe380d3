//! A thin epoll wrapper with a nanosecond timeout (`epoll_pwait2`, Linux 5.11+; millisecond
//! `epoll_wait` otherwise), and a wake-up timer beside it. Tokio's timer wheel ticks in whole
//! milliseconds, which sends fixed-rate operations in bursts and late; the load loop needs to wake when
//! each operation is due.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub const READABLE: u32 = libc::EPOLLIN as u32 | libc::EPOLLRDHUP as u32;
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;

static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

pub struct Epoll {
    fd: RawFd,
    events: Vec<libc::epoll_event>,
}

/// One readiness report: the token given at registration and the event bits.
#[derive(Debug, Clone, Copy)]
pub struct Ready {
    pub token: u64,
    pub events: u32,
}

impl Ready {
    pub fn readable(&self) -> bool {
        self.events & (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32
            != 0
    }

    pub fn writable(&self) -> bool {
        self.events & (libc::EPOLLOUT | libc::EPOLLERR) as u32 != 0
    }
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Epoll {
            fd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; 64],
        })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: `event` outlives the call; the result is checked.
        if unsafe { libc::epoll_ctl(self.fd, op, fd, &mut event) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    /// Waits until something is ready or `timeout` passes (`None` = no limit).
    pub fn wait(&mut self, timeout: Option<Duration>) -> io::Result<usize> {
        let max = self.events.len() as libc::c_int;
        let n = if NO_PWAIT2.load(Ordering::Relaxed) {
            self.wait_ms(timeout, max)
        } else {
            let spec = timeout.map(|t| libc::timespec {
                tv_sec: t.as_secs() as libc::time_t,
                tv_nsec: t.subsec_nanos() as libc::c_long,
            });
            let spec_ptr = spec
                .as_ref()
                .map_or(std::ptr::null(), |s| s as *const libc::timespec);
            // SAFETY: the event buffer holds `max` entries; the timespec outlives the call.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_epoll_pwait2,
                    self.fd,
                    self.events.as_mut_ptr(),
                    max,
                    spec_ptr,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                )
            } as libc::c_int;
            if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ENOSYS) {
                NO_PWAIT2.store(true, Ordering::Relaxed);
                self.wait_ms(timeout, max)
            } else {
                n
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(n as usize)
    }

    fn wait_ms(&mut self, timeout: Option<Duration>, max: libc::c_int) -> libc::c_int {
        let ms = timeout.map_or(-1, |t| {
            t.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
        });
        // SAFETY: the event buffer holds `max` entries.
        unsafe { libc::epoll_wait(self.fd, self.events.as_mut_ptr(), max, ms) }
    }

    /// The reports of the last [`Epoll::wait`].
    pub fn ready(&self, i: usize) -> Ready {
        let e = self.events[i];
        Ready {
            token: e.u64,
            events: e.events,
        }
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value.
        unsafe { libc::close(self.fd) };
    }
}

/// The token under which a [`WakeTimer`] reports in its epoll set.
pub const TIMER_TOKEN: u64 = u64::MAX;

/// The time a loop sleeps until, kept as a timerfd in its epoll set and set again only when that time
/// changes. Why: a sleep with a timeout arms the CPU's earliest timer and cancels it when a socket
/// wakes the thread first, and on a VM both program the timer hardware: a wake-up by a write cost the
/// woken thread 12 µs with a 1 ms timeout armed against 4 µs without (`bench/load/wakeups.c`). A loop
/// woken by responses between two due times keeps the one timer it armed instead.
pub struct WakeTimer {
    fd: RawFd,
    armed: Option<Instant>,
}

impl WakeTimer {
    /// A timer registered in `epoll`, not armed.
    pub fn new(epoll: &Epoll) -> io::Result<WakeTimer> {
        // SAFETY: plain syscall; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let timer = WakeTimer { fd, armed: None };
        epoll.add(fd, TIMER_TOKEN, libc::EPOLLIN as u32)?;
        Ok(timer)
    }

    /// Fires at `at` (after `now`) or a moment later, never before: the delay is counted from a
    /// clock reading taken before the kernel's. Setting it also clears an expiry not yet read.
    fn arm(&mut self, at: Instant, now: Instant) -> io::Result<()> {
        let delay = at
            .saturating_duration_since(now)
            .max(Duration::from_nanos(1));
        let value = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: delay.as_secs() as libc::time_t,
                tv_nsec: delay.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: `value` outlives the call; the old value is not asked for.
        if unsafe { libc::timerfd_settime(self.fd, 0, &value, std::ptr::null_mut()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        self.armed = Some(at);
        Ok(())
    }
}

impl Drop for WakeTimer {
    fn drop(&mut self) {
        // SAFETY: the fd is owned by this value (closing it also removes it from the epoll set).
        unsafe { libc::close(self.fd) };
    }
}

impl Epoll {
    /// Waits until something is ready or `wake` comes, with `timer` (registered in this set) set to
    /// `wake` unless it already is. The timer's own report carries [`TIMER_TOKEN`].
    pub fn wait_until(&mut self, timer: &mut WakeTimer, wake: Instant) -> io::Result<usize> {
        let now = Instant::now();
        if wake <= now {
            return self.wait(Some(Duration::ZERO));
        }
        // Armed at `wake`, still in the future: it has not fired yet.
        if timer.armed != Some(wake) {
            timer.arm(wake, now)?;
        }
        self.wait(None)
    }
}

/// Lets the kernel fire this thread's timers at most `slack` late (the default is 50 µs).
pub fn set_timer_slack(slack: Duration) {
    // SAFETY: plain prctl on the calling thread.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            slack.as_nanos().max(1) as libc::c_ulong,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::Instant;

    #[test]
    fn waits_for_sub_millisecond_timeouts_and_reports_readiness() {
        let mut poll = Epoll::new().unwrap();
        let start = Instant::now();
        assert_eq!(poll.wait(Some(Duration::from_micros(300))).unwrap(), 0);
        let waited = start.elapsed();
        assert!(waited >= Duration::from_micros(300), "{waited:?}");

        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        poll.add(a.as_raw_fd(), 42, READABLE).unwrap();
        b.write_all(b"x").unwrap();
        assert_eq!(poll.wait(Some(Duration::from_secs(5))).unwrap(), 1);
        let r = poll.ready(0);
        assert_eq!(r.token, 42);
        assert!(r.readable());
        assert!(!r.writable());
    }

    #[test]
    fn a_wake_timer_fires_at_its_time_and_not_before_and_is_set_again_when_the_time_changes() {
        let mut poll = Epoll::new().unwrap();
        let mut timer = WakeTimer::new(&poll).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        poll.add(a.as_raw_fd(), 7, READABLE).unwrap();

        // Sockets wake the loop before a far wake-up time, twice: the timer set for it stays quiet.
        let far = Instant::now() + Duration::from_secs(5);
        for _ in 0..2 {
            b.write_all(b"x").unwrap();
            assert_eq!(poll.wait_until(&mut timer, far).unwrap(), 1);
            assert_eq!(poll.ready(0).token, 7);
            let mut byte = [0u8];
            std::io::Read::read(&mut &a, &mut byte).unwrap();
        }

        // A nearer time: the timer is set again and fires then, never before.
        let near = Instant::now() + Duration::from_millis(20);
        assert_eq!(poll.wait_until(&mut timer, near).unwrap(), 1);
        let fired = Instant::now();
        assert_eq!(poll.ready(0).token, TIMER_TOKEN);
        assert!(fired >= near, "fired {:?} early", near - fired);

        // Set again for a later time: the expiry it reported is cleared, so it does not report again
        // until then.
        let later = Instant::now() + Duration::from_millis(20);
        assert_eq!(poll.wait_until(&mut timer, later).unwrap(), 1);
        assert_eq!(poll.ready(0).token, TIMER_TOKEN);
        assert!(Instant::now() >= later);

        // A time already past: no sleep, and the timer's expiry, not read, is reported again.
        assert_eq!(poll.wait_until(&mut timer, later).unwrap(), 1);
        assert_eq!(poll.ready(0).token, TIMER_TOKEN);
    }
}

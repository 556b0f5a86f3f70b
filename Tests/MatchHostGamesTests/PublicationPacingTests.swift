import MatchHostCore
import NIOCore
import Testing

@Suite struct PublicationPacingTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    @Test func theFirstChangeAndOneAfterAQuietSpellGoOutAtOnce() {
        var pacing = PublicationPacing(interval: .milliseconds(50))
        #expect(pacing.due(now: self.start) == self.start)
        pacing.published(at: self.start)
        let later = self.start + .milliseconds(80)
        #expect(pacing.due(now: later) == later)
    }

    @Test func changesComingFasterThanTheIntervalWaitForIt() {
        var pacing = PublicationPacing(interval: .milliseconds(50))
        pacing.published(at: self.start)
        #expect(pacing.due(now: self.start + .milliseconds(10)) == self.start + .milliseconds(50))
        #expect(pacing.due(now: self.start + .milliseconds(50)) == self.start + .milliseconds(50))
        pacing.published(at: self.start + .milliseconds(50))
        #expect(pacing.due(now: self.start + .milliseconds(51)) == self.start + .milliseconds(100))
    }
}

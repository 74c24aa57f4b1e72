"""Write the sample SwissFEL logbook in ./SwissFEL, byte for byte the same on every run.

Run: python data/elog/make_sample.py

The entries are invented (names, numbers and events), in the shape elogd writes them
(as indexer/sources/elog.py reads them): one file per day in year folders, plus one old
top-level file with ctime dates. Deliberate oddities: one record stored as cp1252 inside a UTF-8 file,
one record with CRLF line ends, one draft, old entries with fewer attributes, empty
attributes, a multi-choice value, threads up to three replies deep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ZURICH = ZoneInfo("Europe/Zurich")
OUT = Path(__file__).resolve().parent / "SwissFEL"

# The logbook's attribute lists over the years (elogd writes every configured one).
ATTRIBUTES = {
    "2017": ["Author", "Type", "Category", "Subject"],
    "2022": ["When", "Author", "Category", "System", "Section", "Effect", "Pikett", "Title"],
    "2023": [
        "When",
        "Author",
        "Category",
        "System",
        "Domain",
        "Section",
        "Effect",
        "Pikett",
        "Valid until",
        "Beamline",
        "Title",
    ],
}


@dataclass
class Entry:
    id: int
    when: datetime
    title: str
    body: str
    encoding: str = "HTML"
    attrs: dict[str, str] = field(default_factory=dict)
    parent: int | None = None
    attachments: tuple[str, ...] = ()
    layout: str = "2023"
    draft: str | None = None
    crlf: bool = False
    cp1252: bool = False
    event_minutes_before: int = 5


ENTRIES: list[Entry] = []
ATTRIBUTE_ARGS = (
    "author",
    "category",
    "system",
    "domain",
    "section",
    "effect",
    "pikett",
    "beamline",
    "type",
    "valid_until",
)


def entry(id: int, when: str, title: str, body: str, **kw: object) -> None:
    """Add an entry; ``when`` is Zurich local time, 'YYYY-MM-DD HH:MM:SS'."""
    attrs = {k: str(kw.pop(k)) for k in list(kw) if k in ATTRIBUTE_ARGS}
    local = datetime.strptime(when, "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZURICH)
    ENTRIES.append(Entry(id, local, title, body, attrs=attrs, **kw))  # type: ignore[arg-type]


# fmt: off
# ----------------------------------------------------------------------------- 2017

entry(
    1187, "2017-06-09 07:55:12", "Pre-beam check injector done",
    "Pre-beam check of the injector completed.\n"
    "Gun RF conditioned to 90 MW peak overnight, no breakdowns in the last 4 h.\n"
    "Laser on cathode, charge 200 pC at SINEG01-DICT215.\n"
    "Ready for beam to the injector dump.\n",
    encoding="plain", layout="2017",
    author="P. Aebi", type="Routine", category="Pre-beam Check",
)
entry(
    1188, "2017-06-09 16:20:45", "Modulator S10CB02-RMOD trip, reset",
    "S10CB02-RMOD tripped on 'klystron arc' at 16:02.\n"
    "Reset from the console, back at nominal voltage after 10 min.\n"
    "If it trips again call RF Pikett.\n",
    encoding="plain", layout="2017",
    author="M. Lüthi", type="Problem Fixed", category="SwissFEL RF",
)

# ----------------------------------------------------------------------------- 2022

entry(
    24102, "2022-02-14 08:12:40", "Start of user operation 2022",
    "<p>Good morning,</p>\n"
    "<p>after the commissioning weeks we start <strong>user operation</strong> today.</p>\n"
    "<ul>\n\t<li>Aramis: 5.8&nbsp;GeV, 100&nbsp;Hz, Alvra</li>\n"
    "\t<li>Athos: 3.1&nbsp;GeV, 100&nbsp;Hz, Maloja</li>\n</ul>\n"
    "<p>Please keep the shift summaries complete &ndash; thanks!</p>\n",
    layout="2022", author="R. Vogt", category="Info", system="Operation",
)
entry(
    24117, "2022-02-15 21:40:03", "Druckanstieg S10CB03-VMCC010 nach RF-Trip",
    "After the RF trip of S10CB03 at 21:31 the pressure at S10CB03-VMCC010 rose to\n"
    "3e-7 mbar and the vacuum valve closed. Beam stopped in Linac1.\n"
    "Pressure is coming down slowly (8e-8 mbar at 21:38).\n"
    "Vacuum Pikett informed.\n",
    encoding="plain", layout="2022",
    author="S. Huber", category="Problem", system="Vacuum", section="S10CB03",
    effect="Beam interruption",
)
entry(
    24118, "2022-02-16 06:05:21", "Re: Druckanstieg S10CB03-VMCC010 nach RF-Trip",
    "> After the RF trip of S10CB03 at 21:31 the pressure at S10CB03-VMCC010 rose to\n"
    "> 3e-7 mbar and the vacuum valve closed.\n\n"
    "Valve opened again at 22:15 after the pressure was below 2e-8 mbar.\n"
    "Cause is outgassing in the RF window region, no leak found.\n"
    "S10CB03 conditioned back to 92% with slow ramp, then nominal.\n",
    encoding="plain", layout="2022", parent=24117,
    author="T. Meier", category="Pikett", system="Vacuum", section="S10CB03",
    pikett="Vakuum",
)
entry(
    24163, "2022-03-03 07:01:58", "Nachtschicht 02./03.03.2022",
    "<p><strong>Summary night shift</strong></p>\n"
    "<table border=\"1\" cellpadding=\"1\" cellspacing=\"1\">\n<tbody>\n"
    "<tr><td>Aramis</td><td>5.8 GeV, 350 &micro;J, user Bernina</td></tr>\n"
    "<tr><td>Athos</td><td>3.0 GeV, 480 &micro;J, user Furka</td></tr>\n"
    "</tbody>\n</table>\n"
    "<p>02:14 one RF trip S30CB11, beam back after 4&nbsp;min.<br />\n"
    "04:50 Athos photon energy change 900&nbsp;eV &rarr; 1000&nbsp;eV, gaps moved, "
    "re-tuned SATUN18:GAP by hand (&minus;0.02&nbsp;mm).</p>\n",
    layout="2022", author="L. Frei", category="Shift summary", system="Operation",
)
entry(
    24190, "2022-03-21 13:30:17", "Gap scan SATUN18: K calibration",
    "[B]Gap scan of SATUN18 for the K calibration[/B]\n\n"
    "Scanned SATUN18:GAP from 10.0 mm to 14.0 mm in 0.1 mm steps, spectrometer on the\n"
    "Athos photon diagnostics. Gap encoder SATUN18-DDRM005-R followed the setpoint within\n"
    "2 um over the whole range.\n\n"
    "Fitted K(gap) agrees with the magnetic measurements to 0.05%.\n"
    "Data: /sf/data/measurements/2022/03/21/satun18_gapscan\n"
    "Previous scan: [url=https://elog-gfa.psi.ch/SwissFEL/23877]entry 23877[/url]\n",
    encoding="ELCode", layout="2022",
    author="A. Brunner", category="Measurement summary", system="Insertion-devices",
    section="SATUN18", attachments=("220321_133012_satun18_kfit.png",),
)
entry(
    24231, "2022-04-08 10:44:09", "Gun laser UV energy drifts",
    "<p>The UV pulse energy of the gun laser drifted from 95&nbsp;&micro;J to 88&nbsp;&micro;J "
    "within 3 hours. Bunch charge at SINEG01 dropped accordingly, the charge feedback "
    "compensated with the attenuator.</p>\n"
    "<p>Laser group checked the SHG crystal temperature: was 0.3&deg;C off, corrected.</p>\n",
    layout="2022", author="K. Zehnder", category="Problem", system="Laser",
    section="SINEG01", effect="Reduced performance",
)
entry(
    24260, "2022-05-12 06:58:31", "Zugang SARUN-Tunnel: Wartung Undulator",
    "Zugang in den Undulatortunnel Aramis von 07:00 bis 11:00.\n"
    "Arbeiten: Wartung der Gap-Antriebe SARUN08 und SARUN09, Sichtkontrolle Kühlwasser.\n"
    "Strahl: kein Strahl in Aramis, Athos läuft weiter.\n"
    "Verantwortlich: M. Keller (Tel. 4321)\n",
    encoding="plain", layout="2022",
    author="M. Keller", category="Access", system="Safety", section="SARUN08",
)
entry(
    24301, "2022-06-30 15:22:47", "S20SY02-MKDC050 power supply fault",
    "<p>Power supply of <strong>S20SY02-MKDC050</strong> went to fault "
    "(&laquo;DC link undervoltage&raquo;). Orbit in Linac2 lost, beam stopped by the "
    "machine protection.</p>\n"
    "<p>Reset worked, beam back at 15:20.</p>\n",
    layout="2022", author="S. Huber", category="Problem", system="Magnet Power Supplies",
    section="S20SY02", effect="Beam interruption",
)
entry(
    24415, "2022-09-19 08:03:55", "Reference settings week 38",
    "Reference settings for week 38\n\n"
    "[TABLE border=\"1\"]\n"
    "Parameter|Aramis|Athos\n"
    "|-\n"
    "Energy|5.8 GeV|3.1 GeV\n"
    "|-\n"
    "Charge|200 pC|200 pC\n"
    "|-\n"
    "Bunch length|25 fs|30 fs\n"
    "[/TABLE]\n\n"
    "Saved as [I]ref_2022_w38[/I] in the settings manager.\n",
    encoding="ELCode", layout="2022",
    author="R. Vogt", category="Weekly reference settings", system="Beamdynamics",
)
entry(
    24488, "2022-11-07 14:59:12", "Schicht-Übergabe Spätschicht",
    "Übergabe an die Spätschicht:\n"
    "- Aramis läuft stabil für Alvra, 5.8 GeV.\n"
    "- Athos: Gap-Scan für Maloja um 18:00 geplant.\n"
    "- Offener Punkt: Wasserkühlung S30 Temperatur leicht erhöht, beobachten.\n",
    encoding="plain", layout="2022",
    author="L. Frei", category="Schicht-Übergabe", system="Operation",
)
entry(
    24520, "2022-12-19 06:00:44", "Start of the winter shutdown 2022/23",
    "<p>Beam off at 06:00. Winter shutdown until 30 January 2023.</p>\n"
    "<p>Access rules: see the shutdown planning page.</p>\n",
    layout="2022", author="R. Vogt", category="Info", system="Operation",
)

# ----------------------------------------------------------------------------- 2023

entry(
    27004, "2023-01-30 09:15:20", "Restart after the winter shutdown",
    "<p>Gun RF on since Friday, first beam on the injector dump this morning at 08:40.</p>\n"
    "<p>Plan this week: Linac set-up (Mon&ndash;Tue), Aramis lasing (Wed), Athos (Thu).</p>\n",
    author="R. Vogt", category="Info", system="Operation", domain="Global",
)
entry(
    27051, "2023-02-13 03:27:33", "RF trip S30CB09: klystron arc",
    "<p>S30CB09 tripped 3 times within 20 minutes on <em>klystron arc</em>. Switched the "
    "station off, energy recovered with the other Linac3 stations "
    "(SARBD01-MBND100:ENERGY-OP back at 5.80&nbsp;GeV).</p>\n"
    "<p>RF Pikett called at 03:25.</p>\n",
    author="T. Meier", category="Problem", system="RF", domain="Linac3", section="S30CB09",
    effect="Reduced performance",
)
entry(
    27052, "2023-02-13 05:10:02", "Re: RF trip S30CB09: klystron arc",
    "<p>Checked on site: arc detector of S30CB09 fired, reflected power was normal. "
    "Reset and conditioned the klystron for 45&nbsp;min, running at nominal since 05:05.</p>\n",
    parent=27051,
    author="D. Stalder", category="Pikett", system="RF", domain="Linac3", section="S30CB09",
    pikett="RF",
)
entry(
    27129, "2023-03-14 06:55:18", "Schicht-Übergabe Frühschicht",
    "Übergabe an die Frühschicht:\n"
    "- Nachtschicht ruhig, keine Störungen.\n"
    "- Überbrückung für BLM SARBD01 folgt (siehe nächster Eintrag).\n",
    encoding="plain",
    author="K. Zehnder", category="Schicht-Übergabe", system="Operation", domain="Global",
)
entry(
    27130, "2023-03-14 10:02:45", "Überbrückung BLM SARBD01: Strahlzeit für Messung",
    "Überbrückung des Strahlverlustmonitors SARBD01-DBLM010 für die Messung der\n"
    "Energieakzeptanz in der Strahlführung zum Aramis-Strahlfänger.\n"
    "Grund: Strahlzeit für Messung, Verluste bis 5 µC/h erwartet.\n"
    "Bewilligt durch: Sicherheitsbeauftragter vom Dienst.\n"
    "Gültig bis heute 16:00, danach wieder aufheben!\n",
    encoding="plain", cp1252=True,
    author="A. Brunner", category="Überbrückung", system="Safety", domain="Aramis",
    section="SARBD01", valid_until="2023-03-14 16:00:00",
)
entry(
    27131, "2023-03-14 16:05:37", "Überbrückung SARBD01 aufgehoben",
    "<p>Die &Uuml;berbr&uuml;ckung von SARBD01-DBLM010 ist aufgehoben, BLM wieder aktiv.</p>\n",
    author="A. Brunner", category="Info", system="Safety", domain="Aramis", section="SARBD01",
)
entry(
    27188, "2023-04-04 22:18:09", "Beam energy calibration SARBD01-MBND100:ENERGY-OP",
    "<p><strong>Energy calibration with the Aramis dump bend</strong></p>\n"
    "<p>Compared SARBD01-MBND100:ENERGY-OP with the spectrometer: offset "
    "&Delta;E = +6.2&nbsp;MeV &plusmn; 0.8&nbsp;MeV at 5.8&nbsp;GeV.</p>\n"
    "<p>Correction applied in the energy server (new offset table v7). "
    "E<sub>beam</sub> now within 0.1&nbsp;% of the photon energy estimate.</p>\n",
    author="J. Roth", category="Measurement summary", system="Beamdynamics", domain="Aramis",
    section="SARBD01",
)
entry(
    27240, "2023-05-09 11:40:50", "How to restore the undulator gaps after an ID trip",
    "[B]Restoring the Athos gaps after an insertion-device trip[/B]\n\n"
    "[LIST]\n"
    "[*]Open the ID expert panel, check that all SATUN segments report 'ready'.\n"
    "[*]Load the last gap snapshot (e.g. SATUN18:GAP = 11.84 mm) from the save/restore tool.\n"
    "[*]Move the gaps in groups of four, never all at once (motor current limit).\n"
    "[*]Check the photon energy on the Athos spectrometer before giving the beam back.\n"
    "[/LIST]\n\n"
    "Details in the [url=https://intranet.psi.ch/swissfel/id-restore]ID restore how-to[/url].\n",
    encoding="ELCode",
    author="A. Brunner", category="Tipps & Tricks", system="Insertion-devices", domain="Athos",
)
entry(
    27311, "2023-06-20 17:25:14", "Timing jitter after RF reference switch",
    "<p>After switching the RF reference to the backup oscillator the arrival time "
    "jitter rose from 15&nbsp;fs to 40&nbsp;fs rms. All Linac stations affected.</p>\n"
    "<p>Switched back to the main reference at 17:20, jitter back to normal.</p>\n",
    author="D. Stalder", category="Problem", system="RF | Timing & Sync", domain="Global",
    effect="Reduced performance",
)
entry(
    27377, "2023-08-02 23:48:31", "Kühlwasser Linac2 Alarm",
    "Temperature alarm of the cooling water circuit Linac2 (S20) at 23:31.\n"
    "Flow OK, supply temperature 29.5 C instead of 28 C. Building services called.\n"
    "Cause: cooling tower fan failure, fixed at 23:45.\n",
    encoding="plain",
    author="S. Huber", category="Pikett", system="Water cooling & Ventilation",
    domain="Linac2", pikett="Haustechnik",
)
entry(
    27420, "2023-09-11 08:30:00", "Laser- und Gun-Performance September",
    "<p>Routine check of gun laser and RF gun:</p>\n"
    "<ul><li>UV energy 96&nbsp;&micro;J, stability 0.9&nbsp;% rms</li>"
    "<li>Quantum efficiency 2.1e-5, cathode #14 (day 212)</li>"
    "<li>Gun phase scan: zero crossing unchanged</li></ul>\n",
    author="K. Zehnder", category="Laser- & Gun-Performance Routine", system="Laser",
    domain="Injector", section="SINEG01",
)
entry(
    27421, "2023-09-11 14:12:40", "RC exchange minutes 11.09.2023",
    "[B]RC exchange, 11.09.2023[/B]\n\n"
    "Present: operation, RF, ID, beam dynamics.\n"
    "[LIST=1]\n"
    "[*]RF: spare thyratron for S30CB09 ordered, delivery end of October.\n"
    "[*]ID: SATUN18 gap encoder firmware update planned for the next maintenance day.\n"
    "[*]Operation: new shift summary template from next week.\n"
    "[/LIST]\n",
    encoding="ELCode",
    author="R. Vogt", category="RC exchange minutes", system="Other", domain="Global",
)
entry(
    27503, "2023-10-29 02:40:11", "Nachtschicht 28./29.10.2023 (Zeitumstellung)",
    "<p>Clock change tonight: the timestamps between 02:00 and 03:00 exist twice, "
    "archiver uses UTC.</p>\n"
    "<p>Beam stable, one Athos FEL-power drop at 01:12 (seed laser realigned).</p>\n",
    author="L. Frei", category="Shift summary", system="Operation", domain="Global",
)
entry(
    27560, "2023-12-18 06:01:03", "Start of the winter shutdown 2023/24",
    "<p>Beam off. Shutdown until 29 January 2024.</p>\n",
    author="R. Vogt", category="Info", system="Operation", domain="Global",
)

# ----------------------------------------------------------------------------- 2024

entry(
    31022, "2024-01-29 10:05:42", "First lasing 2024 in Aramis",
    "<p>Aramis lasing again since 09:50, 250&nbsp;&micro;J at 12&nbsp;keV.</p>\n",
    author="J. Roth", category="Info", system="Operation", domain="Aramis",
)
entry(
    31180, "2024-03-11 02:47:19", "RF trip S30CB09-RMOD: klystron vacuum interlock",
    "<p>S30CB09-RMOD tripped on the <strong>klystron vacuum interlock</strong> at 02:41. "
    "Energy at SARBD01-MBND100:ENERGY-OP dropped to 5.71&nbsp;GeV, Aramis photon energy "
    "off by 3&nbsp;%.</p>\n"
    "<p>Station cannot be reset from remote. RF Pikett called.</p>\n",
    author="T. Meier", category="Problem", system="RF", domain="Linac3", section="S30CB09",
    effect="Beam interruption",
    attachments=("240311_024512_S30CB09_ionpump.png",),
)
entry(
    31181, "2024-03-11 03:55:02", "Re: RF trip S30CB09-RMOD: klystron vacuum interlock",
    "> S30CB09-RMOD tripped on the klystron vacuum interlock at 02:41.\n\n"
    "On site 03:20. Ion pump current of the klystron was 12 uA (limit 10 uA),\n"
    "came down after 20 min. Modulator reset, HV ramped slowly, at nominal 03:50.\n",
    encoding="plain", parent=31180,
    author="D. Stalder", category="Pikett", system="RF", domain="Linac3", section="S30CB09",
    pikett="RF",
)
entry(
    31185, "2024-03-11 09:40:27", "Re: Re: RF trip S30CB09-RMOD: trips again",
    "<p>Two more trips at 07:12 and 09:31, now on <em>thyratron fault</em>. "
    "Thyratron heater voltage raised by 0.2&nbsp;V as a first measure.</p>\n",
    parent=31181,
    author="D. Stalder", category="Problem", system="RF", domain="Linac3", section="S30CB09",
    effect="Beam interruption",
)
entry(
    31193, "2024-03-12 10:05:55", "Re: RF trip S30CB09-RMOD: thyratron replaced",
    "[B]Thyratron of S30CB09-RMOD replaced[/B] during the access 07:00-09:30.\n"
    "Conditioned to full voltage, no trip since. The old thyratron had 31000 h.\n"
    "Spare from the [url=https://elog-gfa.psi.ch/SwissFEL/27421]RC exchange of "
    "September[/url] used.\n",
    encoding="ELCode", parent=31185,
    author="D. Stalder", category="Info", system="RF", domain="Linac3", section="S30CB09",
)
entry(
    31240, "2024-03-27 15:33:08", "Aramis K scan SARUN10-UIND030:K_SET",
    "[B]K scan of one Aramis undulator segment[/B]\n"
    "Scanned SARUN10-UIND030:K_SET around the nominal K = 1.2 (+-0.3 %),\n"
    "pulse energy on the gas monitor:\n"
    "[TABLE]\n"
    "K offset|pulse energy\n"
    "|-\n"
    "-0.3 %|231 uJ\n"
    "|-\n"
    "0|262 uJ\n"
    "|-\n"
    "+0.3 %|240 uJ\n"
    "[/TABLE]\n"
    "Segment is well tuned, no change.\n",
    encoding="ELCode",
    author="J. Roth", category="Measurement summary", system="Insertion-devices",
    domain="Aramis", section="SARUN10",
)
entry(
    31302, "2024-04-16 13:21:40", "SF-PS Fehler S20SY02-MKDC050",
    "<p>Netzger&auml;t S20SY02-MKDC050 meldet <strong>Fehler</strong> "
    "(&laquo;Earth fault&raquo;). Strahl in Linac2 gestoppt.</p>\n"
    "<p>Reset nicht m&ouml;glich, PS-Pikett informiert.</p>\n",
    author="K. Zehnder", category="Problem", system="Magnet Power Supplies",
    domain="Linac2", section="S20SY02", effect="Beam interruption",
)
entry(
    31303, "2024-04-16 14:30:12", "Re: SF-PS Fehler S20SY02-MKDC050",
    "Earth fault came from a wet cable tray below S20SY02 (condensation).\n"
    "Dried, insulation measured OK, PS back on at 14:25.\n",
    encoding="plain", parent=31302,
    author="B. Kälin", category="Pikett", system="Magnet Power Supplies", domain="Linac2",
    section="S20SY02", pikett="Netzgeräte",
)
entry(
    31305, "2024-04-16 15:02:47", "Re: SF-PS Fehler S20SY02-MKDC050: orbit",
    "<p>Orbit in Linac2 restored with the reference from this morning, "
    "beam back in Aramis and Athos at 14:58.</p>\n",
    parent=31302,
    author="K. Zehnder", category="Info", system="Operation", domain="Linac2",
    section="S20SY02",
)
entry(
    31309, "2024-04-17 08:44:30", "Re: SF-PS Fehler S20SY02-MKDC050: again",
    "<p>S20SY02-MKDC050 failed again at 07:58, same earth fault. "
    "Building services are looking at the air conditioning of the tunnel section.</p>\n",
    parent=31302,
    author="S. Huber", category="Problem", system="Magnet Power Supplies", domain="Linac2",
    section="S20SY02", effect="Beam interruption",
)
entry(
    31410, "2024-05-22 06:06:38", "Frühschicht 22.05.2024",
    "<p><strong>Shift summary early shift</strong></p>\n"
    "<p>Aramis: 11.2&nbsp;keV for Cristallina, 300&nbsp;&micro;J.<br />\n"
    "Athos: 600&nbsp;eV for Maloja, two-colour mode.</p>\n"
    "<p>No trips.</p>\n",
    crlf=True,
    author="L. Frei", category="Shift summary", system="Operation", domain="Global",
)
entry(
    31488, "2024-06-18 09:12:05", "Zugang Athos: Motor SATUN18-DDRM005-R",
    "Zugang Athos Undulator 09:30-11:30 für den Tausch des Gap-Motors SATUN18-DDRM005-R.\n"
    "Kein Strahl in Athos während des Zugangs.\n",
    encoding="plain",
    author="M. Keller", category="Access", system="Insertion-devices", domain="Athos",
    section="SATUN18",
    attachments=("240618_091002_motor_SATUN18.jpg", "240618_091130_checklist.pdf"),
)
entry(
    31489, "2024-06-18 12:02:19", "Re: Zugang Athos: Motor SATUN18-DDRM005-R",
    "<p>Motor getauscht, Referenzfahrt gemacht. SATUN18:GAP folgt dem Sollwert wieder, "
    "Abweichung &lt; 1&nbsp;&micro;m.</p>\n",
    parent=31488,
    author="M. Keller", category="Info", system="Insertion-devices", domain="Athos",
    section="SATUN18",
)
entry(
    31560, "2024-08-05 16:40:33", "Photon energy scan for Alvra",
    "<p>Scanned the photon energy 7.1&ndash;7.2&nbsp;keV in 2&nbsp;eV steps with the "
    "undulator K (all SARUN segments) and the DCM together.</p>\n"
    "<p>Pulse energy constant within 5&nbsp;%.</p>\n",
    author="J. Roth", category="Info", system="Photonics", domain="Aramis Beamlines",
    beamline="Alvra",
)
entry(
    31611, "2024-09-10 20:15:48", "Vacuum pressure rise SATUN06",
    "<p>Pressure rise at ion pump SATUN06-VPIG010 to 5e-8&nbsp;mbar during the gap "
    "movement. Athos FEL power dropped by 30&nbsp;%.</p>\n"
    "<p>Gap movements stopped, pressure recovering.</p>\n",
    author="T. Meier", category="Problem", system="Vacuum", domain="Athos",
    section="SATUN06", effect="Reduced performance",
)
entry(
    31702, "2024-10-21 07:30:00", "Schicht-Auftrag KW43",
    "Aufträge für die Schichten in KW 43:\n"
    "1. Aramis: Nutzerbetrieb Bernina, 9 keV.\n"
    "2. Athos: Maschinenentwicklung Dienstag 08:00-16:00.\n"
    "3. Referenz speichern am Freitag.\n",
    encoding="plain",
    author="R. Vogt", category="Schicht-Auftrag",
)
entry(
    31760, "2024-11-18 13:05:27", "Seed laser operation Athos",
    "<p>Seed laser aligned on the Athos modulator, overlap found at 12:40. "
    "Seeded spectrum 0.3&nbsp;eV FWHM at 520&nbsp;eV.</p>\n",
    author="K. Zehnder", category="Seed laser operation", system="Laser", domain="Athos",
)
entry(
    31811, "2024-12-16 06:00:20", "Start of the winter shutdown 2024/25",
    "<p>Beam off at 06:00, shutdown until 27 January 2025.</p>\n",
    author="R. Vogt", category="Info", system="Operation", domain="Global",
)

# ----------------------------------------------------------------------------- 2025

entry(
    34010, "2025-01-27 11:22:36", "Restart 2025: beam in both lines",
    "<p>Beam in Aramis and Athos since 11:00. Energy feedback not yet closed.</p>\n",
    author="J. Roth", category="Info", system="Operation", domain="Global",
)
entry(
    34077, "2025-02-17 19:48:51", "Energy feedback oscillates at SARBD01",
    "<p>The Aramis energy feedback oscillates with 0.5&nbsp;Hz, "
    "SARBD01-MBND100:ENERGY-OP swings &plusmn;4&nbsp;MeV.</p>\n"
    "<p>Feedback opened, energy stable by hand.</p>\n",
    author="T. Meier", category="Problem", system="Feedbacks", domain="Aramis",
    section="SARBD01", effect="Reduced performance",
)
entry(
    34078, "2025-02-17 21:30:14", "Re: Energy feedback oscillates at SARBD01",
    "Gain of the energy feedback was left at the commissioning value (0.8).\n"
    "Set back to 0.3, feedback closed again, no oscillation since 21:20.\n",
    encoding="plain", parent=34077,
    author="J. Roth", category="Info", system="Feedbacks", domain="Aramis", section="SARBD01",
)
entry(
    34120, "2025-03-06 16:10:09", "DCM minutes 06.03.2025",
    "[B]DCM meeting[/B]\n"
    "[LIST]\n"
    "[*]Cristallina DCM: crystal cooling upgrade done, first tests ok.\n"
    "[*]Alvra DCM: pitch drift 2 urad/h, under investigation.\n"
    "[/LIST]\n",
    encoding="ELCode",
    author="J. Roth", category="DCM minutes", system="Photonics", domain="Aramis Beamlines",
    beamline="Cristallina",
)
entry(
    34188, "2025-04-02 04:12:45", "Netzstörung: alle Netzgeräte ausgefallen",
    "Power glitch at 04:03 (grid event, 60 ms).\n"
    "All magnet power supplies and the RF modulators tripped, beam off.\n"
    "Restart sequence started 04:10.\n",
    encoding="plain",
    author="S. Huber", category="Pikett", system="Electric supply", domain="Global",
    pikett="Elektro", effect="Beam interruption",
)
entry(
    34189, "2025-04-02 06:30:27", "Re: Netzstörung: recovery",
    "<p>All stations back, S30CB09 needed two resets. Beam back in Aramis 05:55, "
    "Athos 06:20.</p>\n",
    parent=34188,
    author="L. Frei", category="Info", system="Operation", domain="Global",
)
entry(
    34251, "2025-05-13 14:33:50", "SATUN18 gap readback jumps",
    "<p>The gap readback of SATUN18 jumps by 20&nbsp;&micro;m every few minutes "
    "(SATUN18:GAP readback vs. encoder SATUN18-DDRM005-R).</p>\n"
    "<p>FEL power fluctuates with it. Segment set to the last good gap and "
    "taken out of the feedback.</p>\n",
    author="A. Brunner", category="Problem", system="Insertion-devices", domain="Athos",
    section="SATUN18", effect="Reduced performance",
)
entry(
    34252, "2025-05-13 16:58:02", "Re: SATUN18 gap readback jumps",
    "<p>Loose connector at the encoder cable of SATUN18-DDRM005-R. Fixed during a "
    "short access, readback clean again.</p>\n",
    parent=34251,
    author="M. Keller", category="Info", system="Insertion-devices", domain="Athos",
    section="SATUN18",
)
entry(
    34330, "2025-06-24 08:05:00", "Reference settings week 26",
    "Reference settings week 26\n"
    "[TABLE]\n"
    "Line|Energy|Photon energy\n"
    "|-\n"
    "Aramis|5.9 GeV|12.4 keV\n"
    "|-\n"
    "Athos|3.2 GeV|1.1 keV\n"
    "[/TABLE]\n"
    "Saved as [I]ref_2025_w26[/I].\n",
    encoding="ELCode",
    author="R. Vogt", category="Weekly reference settings", system="Beamdynamics",
    domain="Global",
)
entry(
    34402, "2025-08-11 10:20:15", "Tip: archiver plots of several PVs",
    "To compare PVs over a shift, paste them comma-separated into the archiver viewer, e.g.\n"
    "SARBD01-MBND100:ENERGY-OP, S30CB09-RMOD:STATE, SATUN18:GAP\n"
    "and use 'align time axes'.\n",
    encoding="plain",
    author="L. Frei", category="Tipps & Tricks", system="Controls",
)
entry(
    34455, "2025-09-15 22:41:36", "SATUN18:GAP stuck at 12.3 mm",
    "SATUN18:GAP does not move, stuck at 12.3 mm; the motor SATUN18-DDRM005-R reports\n"
    "'following error'. Athos photon energy scan stopped.\n"
    "ID Pikett informed.\n",
    encoding="plain",
    author="T. Meier", category="Problem", system="Insertion-devices", domain="Athos",
    section="SATUN18", effect="Reduced performance",
)
entry(
    34520, "2025-10-06 06:58:44", "Nachtschicht 05./06.10.2025",
    "<p><strong>Night shift</strong></p>\n"
    "<ul><li>23:40 RF fault S10CB05, see next entry.</li>"
    "<li>02:10 Aramis beam dump temperature warning, rate reduced to 50&nbsp;Hz for 30&nbsp;min.</li>"
    "<li>Athos stable.</li></ul>\n",
    author="K. Zehnder", category="Shift summary", system="Operation", domain="Global",
)
entry(
    34521, "2025-10-06 07:05:10", "RF fault S10CB05 during the night",
    "RF fault of S10CB05 at 23:40: waveguide arc, reset after 2 min.\n"
    "No repetition.\n",
    encoding="plain",
    author="K. Zehnder", category="Problem", system="RF", domain="Linac1", section="S10CB05",
)
entry(
    34522, "2025-10-07 09:14:29", "Aramis beam dump temperature",
    "<p>The temperature of the Aramis beam dump SARBD02 reached 68&nbsp;&deg;C at "
    "100&nbsp;Hz (warning at 65&nbsp;&deg;C). Cooling water flow checked: nominal.</p>\n"
    "<p>Keep 100&nbsp;Hz but watch the trend; building services will clean the filter "
    "on the next maintenance day.</p>\n",
    author="J. Roth", category="Info", system="Water cooling & Ventilation", domain="Aramis",
    section="SARBD02",
)
entry(
    34523, "2025-10-07 15:30:02", "Entwurf: Spätschicht 07.10.2025",
    "<p>Sp&auml;tschicht: noch nicht fertig ...</p>\n",
    draft="L. Frei",
    author="L. Frei", category="Shift summary", system="Operation", domain="Global",
)
entry(
    34530, "2025-10-08 11:02:57", "Controls upgrade of the console PCs",
    "Console PCs in the control room get the new OS image on Thursday.\n"
    "Save your panels beforehand.\n",
    encoding="plain",
    author="R. Vogt",
)
# fmt: on


# ----------------------------------------------------------------------------- writing


def _ctime(when: datetime) -> str:
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return (
        f"{days[when.weekday()]} {months[when.month - 1]} {when.day:02d} "
        f"{when:%H:%M:%S} {when.year}"
    )


def _attribute(e: Entry, name: str) -> str:
    if name == "When":
        return str(int((e.when - timedelta(minutes=e.event_minutes_before)).timestamp()))
    if name in ("Title", "Subject"):
        return e.title
    if name == "Valid until":
        value = e.attrs.get("valid_until")
        if not value:
            return ""
        local = datetime.strptime(str(value), "%Y-%m-%d %H:%M:%S").replace(tzinfo=ZURICH)
        return str(int(local.timestamp()))
    return str(e.attrs.get(name.lower(), ""))


def record(e: Entry, children: list[int]) -> bytes:
    date = _ctime(e.when) if e.layout == "2017" else format_datetime(e.when)
    lines = [f"$@MID@$: {e.id}", f"Date: {date}"]
    if children:
        lines.append("Reply to: " + ", ".join(map(str, children)))
    if e.parent is not None:
        lines.append(f"In reply to: {e.parent}")
    lines += [f"{name}: {_attribute(e, name)}" for name in ATTRIBUTES[e.layout]]
    lines.append("Attachment: " + ",".join(e.attachments))
    lines.append(f"Encoding: {e.encoding}")
    if e.draft:
        lines.append(f"Draft: {e.draft}")
    lines.append("=" * 40)
    text = "\n".join(lines) + "\n" + e.body + "\n"
    if e.crlf:
        text = text.replace("\n", "\r\n")
    return text.encode("cp1252" if e.cp1252 else "utf-8")


def file_name(e: Entry) -> str:
    day = f"{e.when:%y%m%d}a.log"
    return day if e.layout == "2017" else f"{e.when:%Y}/{day}"


def build() -> dict[str, bytes]:
    """Every logbook file of the sample: {path under SwissFEL/: bytes}."""
    ids = [e.id for e in ENTRIES]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "ids must grow with time"
    assert [e.when for e in ENTRIES] == sorted(e.when for e in ENTRIES), "dates must grow"
    children: dict[int, list[int]] = {}
    for e in ENTRIES:
        if e.parent is not None:
            assert e.parent in ids, e.id
            children.setdefault(e.parent, []).append(e.id)
    files: dict[str, list[bytes]] = {}
    for e in ENTRIES:
        files.setdefault(file_name(e), []).append(record(e, children.get(e.id, [])))
    return {rel: b"".join(records) for rel, records in sorted(files.items())}


def main() -> None:
    files = build()
    for old in OUT.glob("**/*.log"):
        old.unlink()
    for rel, data in files.items():
        path = OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"{len(ENTRIES)} entries in {len(files)} files under {OUT}")


if __name__ == "__main__":
    main()

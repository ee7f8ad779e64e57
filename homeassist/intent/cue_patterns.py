"""The vocabulary of request routing: one regular expression per idea, by the kind it points to.

Each pattern is one idea ("a timer word", "a device noun", "a question about the weather"), written
by hand from the vocabulary and phrasing of its domain, never from sentences of an evaluation set.
``router.CUES`` gives each its name, kind and weight. Patterns match normalised text (lower case,
numbers as digits).
"""

from __future__ import annotations


def _words(*alternatives: str) -> str:
    """A regex alternation of phrases, each matched as whole words (and an optional plural -s)."""
    return r"\b(?:" + "|".join(alternatives) + r")s?\b"


DEVICE_NOUN = _words(
    r"lights?",
    r"lamps?",
    r"lighting",
    r"bulbs?",
    r"chandelier",
    r"led strip",
    r"leds",
    r"switch(?:es)?",
    r"plugs?",
    r"outlets?",
    r"sockets?",
    r"fans?",
    r"ceiling fan",
    r"thermostats?",
    r"heating",
    r"heaters?",
    r"radiators?",
    r"furnace",
    r"boiler",
    r"hvac",
    r"a ?c",
    r"air ?con(?:ditioner|ditioning)?",
    r"blinds?",
    r"shades?",
    r"curtains?",
    r"drapes?",
    r"shutters?",
    r"awnings?",
    r"covers?",
    r"garage(?: door)?",
    r"gates?",
    r"doors?",
    r"locks?",
    r"deadbolt",
    r"windows?",
    r"skylight",
    r"valves?",
    r"sprinklers?",
    r"irrigation",
    r"vacuum(?: cleaner)?",
    r"robot vacuum",
    r"roomba",
    r"roborock",
    r"hoover",
    r"(?:lawn ?)?mower",
    r"tv",
    r"television",
    r"speakers?",
    r"coffee (?:maker|machine)",
    r"kettle",
    r"oven",
    r"stove",
    r"dishwasher",
    r"washer",
    r"washing machine",
    r"dryer",
    r"fridge",
    r"refrigerator",
    r"freezer",
    r"humidifier",
    r"dehumidifier",
    r"purifier",
    r"sensors?",
    r"detectors?",
    r"cameras?",
    r"doorbell",
    r"chime",
    r"siren",
    r"scene",
    r"(?:guest|away|night|eco|vacation|party|sleep|home) mode",
    r"media player",
    r"shower",
    r"charging station",
    r"dock",
    r"scripts?",
    r"routines?",
    r"automations?",
    r"coffee",
    r"brightness",
    r"dimmer",
    r"devices?",
    r"appliances?",
    r"hue",
    r"wemo",
    r"smart plug",
    r"socket",
    r"pump",
    r"water heater",
    r"fireplace",
    r"alarm system",
    r"security system",
)
DEVICE_VERB = (
    r"\b(?:turn|switch|power|flip|shut)\b.*\b(?:on|off|up|down)\b"
    # "put the heating on", not "put a stop on my account": on/off here ends the phrase or a clause.
    r"|\b(?:put|set|keep|leave)\b.*\b(?:on|off)\b(?! (?:my|the|a|an|your|our|his|her|their|this|that)\b)"
    r"|\b(?:turn|switch|power|flip|shut|shutdown|cut) (?:on|off|down|up)\b"
    r"|\b(?:dim|brighten|lighten|darken|illuminate|unlock|lock|toggle|arm|disarm|"
    r"mow|mowing|vacuum|vacuuming|watering|preheat|brew|transition to)\b"
    r"|^(?:\w+ ){0,3}(?:on|off)$|\breturn (?:to )?(?:the )?(?:base|dock|charger)\b"
)
# Verbs that also open apps and start games: evidence only beside a device noun or a room.
WEAK_DEVICE_VERB = (
    r"\b(?:open|close|raise|lower|activate|deactivate|enable|disable|start|stop|pause|resume|"
    r"unpause|clean|cleaning|water|heat|cool|warm|run)\b"
)
# Rooms of a house: with a setting or an action they point at the devices there.
ROOM = _words(
    r"kitchen",
    r"bathroom",
    r"bedroom",
    r"living room",
    r"lounge",
    r"dining room",
    r"office",
    r"study",
    r"basement",
    r"cellar",
    r"attic",
    r"garage",
    r"hallway",
    r"hall",
    r"landing",
    r"nursery",
    r"playroom",
    r"porch",
    r"patio",
    r"terrace",
    r"balcony",
    r"garden",
    r"lawn",
    r"yard",
    r"pool",
    r"house",
    r"flat",
    r"apartment",
    r"room",
    r"upstairs",
    r"downstairs",
    r"(?:first|second|ground|top|upper|lower) floor",
)
LONG_QUESTION = r"^(?:what|which|who|where|when|why|how)\b(?:\W+\w+){9,}"
LEVEL_CHANGE = (
    r"\b(?:brighter|dimmer|darker|lighter|warmer|cooler|hotter|colder|louder|quieter)\b"
    r"|\b(?:too|very|so) (?:dark|bright|hot|cold|warm|chilly|stuffy)\b"
    r"|\b(?:increase|decrease|raise|lower|reduce|boost|adjust|change|set|make)\b.*"
    r"\b(?:brightness|light|lights|lighting|temp|temperature|heat|heating|level|colou?r|"
    r"fan|speed|volume)\b"
    r"|\b(?:colou?r temperature|kelvin|[1-9]\d{3} ?k|warm white|cool white)\b"
    r"|\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|cyan|magenta)\b"
    r".*\b(?:light|lights|lighting|lamp|bulb)\b"
    r"|\b(?:change|make|set|turn|switch)\b.*\bcolou?r\b|\bcolou?r (?:of|in|at) .* to\b"
    r"|\b(?:to|make|turn|set|change)\b.*\b(?:red|green|blue|yellow|purple|pink|orange|white|violet|"
    r"cyan|magenta)$"
    r"|\b\d+ ?(?:%|percent)"
)
_STATE_WORD = (
    r"(?:on|off|open|opened|opening|closed|closing|shut|locked|unlocked|running|triggered|detected|"
    r"connected|plugged in|charging|low|hot|cold|armed|disarmed|available|active|idle|home|at home)"
)
DEVICE_STATE = (
    r"^(?:is|are|was|were|did|does|do|has|have)\b.*\b" + _STATE_WORD + r"\b"
    r"|\b(?:which|what|how many|any|all)\b.*" + DEVICE_NOUN + r".*\b" + _STATE_WORD + r"\b"
    r"|\b(?:which|what|how many|any)\b.*\b(?:things?|stuff|everything)\b.*\b" + _STATE_WORD + r"\b"
    r"|\b(?:state|status) of\b"
    r"|\b(?:humidity|occupancy|motion|smoke|leak|co2|carbon monoxide|moisture|batter(?:y|ies)|"
    r"power usage|energy usage|consumption|rainfall|voltage|wattage|power factor|apparent power|"
    r"stored energy|air quality|aqi|illuminance|lux|download speed|updates? available)\b"
    r"|\b(?:anyone|anybody|someone|somebody|people|who) (?:is |are )?(?:at )?home\b"
    r"|^(?:is|are) (?:anyone|anybody|someone|somebody)\b"
    r"|\b(?:indicated|measured|reported|detected) by\b|\b(?:pm ?\d+(?:\.\d)?|ozone|particulates?|"
    r"irradiance|wet|flooded|flooding|vibrating|solar production)\b"
)
MEDIA_CONTROL = (
    r"\b(?:pause|unpause|resume|continue|restart|mute|unmute|skip)\b.*\b(?:music|audio|playing|song|"
    r"track|speaker|tv|media|player|podcast|radio)\b|\bplay(?:ing)? again\b|\b(?:continue|resume) "
    r"playing\b|\bvolume\b|\b(?:playing|paused|stopped)\b.*\b(?:player|speaker|tv)\b"
)
IN_HERE = r"\bin here\b|\b(?:it'?s|too|so|getting) (?:dark|gloomy|dim)\b|\bdarkness\b|\bset the mood\b"
# Temperature is a device reading in a room, and a web question about a place or the outdoors.
INDOOR_TEMPERATURE = (
    r"\b(?:temp|temperature|degrees?|°)\b(?!.*\b(?:outside|outdoors?|forecast|tomorrow|tonight|"
    r"weekend|week)\b)"
    r"|\bhow (?:warm|hot|cold|cool) is (?:it (?:in )?here|it inside|it in the house|(?!it\b)[\w ]+$)"
    r"|^how (?:warm|hot|cold|cool) is it$"
)
OUTDOOR = (
    r"\b(?:outside|outdoors?|out there)\b"
    r"|\b(?:temperature|degrees|hot|cold|warm|cool|humid|sticky|nice|climate)\b.*"
    r"\b(?:today|tonight|tomorrow|this (?:week|weekend|morning|afternoon|evening)|next week)\b"
    r"|\b(?:tomorrow|tonight)\b.*\b(?:temperature|degrees|hot|cold|warm|nice)\b"
    r"|\b(?:is it going to|will it|is it gonna) be\b|\bclimate\b"
    r"|\b(?:how (?:hot|cold|warm)|temperature|degrees) (?:is it )?(?:in|at) (?!(?:here|the "
    r"(?:house|room|kitchen|bedroom|bathroom|office|basement|attic|garage|hall|hallway)))\w+"
)

TIMER = _words(
    r"timers?",
    r"alarms?",
    r"count ?down",
    r"stopwatch",
    r"snooze",
    r"calendar",
    r"agenda",
    r"appointments?",
    r"meetings?",
    r"events?",
    r"schedule",
    r"scheduled",
    r"rescheduled?",
    r"diary",
    r"planner",
)
# Asking to be told later outweighs what the reminder is about ("remind me to send the email").
REMIND = (
    r"\bremind(?:er|ers)?\b|\bremaind(?:er)?\b|\bremainder\b|\bwake me\b|\bwake up call\b"
    r"|\bget me up\b|\bremember to\b|\bdon'?t let me forget\b|\bnotify me\b|\balert me\b"
    r"|\bset (?:an? )?(?:alert|notification|alarm|timer)\b|\bremember (?:that|my)\b"
    r"|\blet me know (?:in|at|when it'?s|when it is)\b|\btell me when it(?:'s| is)\b"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|weekday)s?"
_MONTH = (
    r"(?:january|february|march|april|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
)
_ORDINAL = (
    r"(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|"
    r"eleventh|twelfth|\w+teenth|twentieth|thirtieth|(?:twenty|thirty)[ -]?(?:first|second|third|"
    r"fourth|fifth|sixth|seventh|eighth|ninth))"
)
# Putting something on a day or at an hour: a calendar entry.
CALENDAR_ACTION = (
    r"\b(?:add|set|mark|cancel|delete|remove|block|put|book|plan|move|flag|create|clear|note)\b.*"
    r"(?:\b" + _WEEKDAY + r"\b|\b" + _MONTH + r"\b|\b(?:tomorrow|tonight|today|next week|every (?:day|"
    r"week|month|year|morning|evening)|" + _ORDINAL + r")\b|\b(?:am|pm|a m|p m|noon|o'clock)\b)"
)
DELAY = (
    r"\b(?:in|after|for) (?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|"
    r"twenty|thirty|forty|forty five|sixty|ninety|half an?|a couple of|a few) (?:and a half )?"
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b"
    r"|\b(?:at|by) (?:\d{1,2}(?::\d\d)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|noon|midnight)(?: ?(?:am|pm|a m|p m|o'clock|oclock))?\b"
    r"|\b(?:tonight at|every (?:day|morning|evening|night|weekday)|tomorrow morning)\b"
)

# The clock and the calendar date, asked outright.
DATETIME = (
    r"\btime (?:is it|now|right now|please)\b|\bwhat time\b|\bcurrent(?:ly)? time\b|\btime in\b"
    r"|\b(?:tell|give|show|say|let) me the (?:time|date|hour|day)\b|\b(?:present|local|exact) time\b"
    r"|\b(?:date|day) (?:is it|today)\b|\btoday'?s date\b|\bwhat (?:is )?today\b|\btoday is which\b"
    r"|\bis (?:it|today) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\bwhat(?:'s| is)? (?:the )?(?:current )?(?:time|date|day|month|year|week)\b"
    r"|\bwhich (?:day|date|month|year)\b"
    r"|\bday of the (?:week|month|year)\b|\btime zone\b"
    r"|^(?:the )?(?:time|date)$"
    r"|\b(?:today|tomorrow|yesterday)'?s date\b|\bwhat date (?:is it|it is|will it be|was it)\b"
    r"|\bo'? ?clock (?:yet|already)\b"
)
# Weaker: calendar arithmetic and questions that mention days or dates.
DATETIME_WEAK = (
    r"\b(?:what|which) day (?:is|was|will|does|falls?)\b|\bhow many (?:days|weeks|months|\w+days) "
    r"(?:until|till|to|left|are|in)\b|\bon (?:a|which) (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b|\b(?:is it|what time of) (?:the )?(?:morning|afternoon|evening|night)\b"
    r"|\b(?:afternoon|morning|evening) yet\b|\bwhen is (?:the )?next\b|\b(?:date|day) of\b"
    r"|\bis (?:it|today) (?:the )?\w+(?:st|nd|rd|th)\b"
)

WEB = (
    _words(
        r"weather",
        r"forecast",
        r"rain",
        r"raining",
        r"rainy",
        r"snow",
        r"snowing",
        r"snowy",
        r"sunny",
        r"cloudy",
        r"overcast",
        r"storms?",
        r"stormy",
        r"thunder(?:storm)?",
        r"windy",
        r"fog",
        r"foggy",
        r"hail",
        r"humid",
        r"umbrella",
        r"raincoat",
        r"jacket",
        r"sweater",
        r"coat",
        r"sunglass(?:es)?",
        r"sunscreen",
        r"sandals",
        r"shorts",
        r"pollen",
        r"uv index",
        r"sun ?rise",
        r"sun ?set",
        r"news",
        r"headlines?",
        r"stocks?",
        r"shares?",
        r"stock market",
        r"markets?",
        r"dow jones",
        r"nasdaq",
        r"s ?& ?p",
        r"exchange rates?",
        r"currency",
        r"dollars?",
        r"euros?",
        r"pounds? sterling",
        r"rupees?",
        r"yen",
        r"bitcoin",
        r"crypto(?:currency)?",
        r"traffic",
        r"commute",
        r"elections?",
        r"polls?",
        r"price of",
        r"prices?",
        r"worth",
        r"opening hours",
        r"open (?:today|now|until)",
        r"box office",
        r"showtimes?",
        r"trending",
        r"happening",
        r"going on",
    )
    # "how hot is it" alone is the home's thermometer (indoor_temperature); outdoors it is the web's.
    + r"|\bhow (?:hot|cold|warm) will it\b|\bwill it be (?:hot|cold|warm|nice|sunny|rainy)\b"
    r"|\b(?:do|will|should) i (?:need|take|bring|wear)\b|\bwhat'?s it like out\b"
    r"|\b(?:latest|newest|recent|current|breaking) (?:on|about|from|in|updates?|developments?|news|"
    r"stories|articles?|headlines?)\b|\b(?:top stories|front page|articles?|updates? on)\b"
    r"|\bstock (?:price|rate|value)\b|\btrading at\b"
    r"|\bconvert\b.*\b(?:dollars?|euros?|pounds?|rupees?|yen|usd|eur|gbp|inr)\b"
    r"|\b(?:usd|eur|gbp|inr|jpy)\b"
)

SPORTS = _words(
    r"scores?",
    r"league",
    r"premier league",
    r"nba",
    r"nfl",
    r"mlb",
    r"nhl",
    r"fifa",
    r"world cup",
    r"playoffs?",
    r"tournament",
    r"match",
    r"game",
    r"won",
    r"win",
    r"results?",
    r"standings",
    r"fixtures?",
)
SEARCH = (
    r"\b(?:search|google|bing|duckduckgo|wikipedia|look up|find out|browse|website|online|internet|web)\b"
)
# Warnings and alerts about the world outside: fresh information.
ALERT = (
    r"\b(?:weather|storm|tornado|hurricane|flood|tsunami|heat|travel|air quality|severe|fire|avalanche|"
    r"wind|snow|ice|frost|smog) (?:alert|warning|advisory|watch)(?:es|s)?\b"
    r"|\b(?:tornado|hurricane|earthquake|wildfire|blizzard|heatwave|heat wave)s?\b"
)
# Asking about now or lately: what a web search is for.
FRESH = (
    r"\b(?:today|tonight|yesterday|last night|this (?:week|weekend|morning|evening)|right now|"
    r"currently|at the moment|lately|latest|tomorrow|next week)\b"
)
# History and trivia are knowledge, not news.
HISTORY = r"\b(?:in|since|of|from|before|after) (?:1[0-9]|20)\d\d\b|^(?:who|what|which) (?:was|were)\b"

# Requests we have no tool for: mail, messages, social media, lists, music, calls, shopping, notes.
COMMUNICATION = _words(
    r"e-?mails?",
    r"mail",
    r"inbox",
    r"messages?",
    r"texts?",
    r"sms",
    r"whatsapp",
    r"facebook",
    r"twitter",
    r"tweets?",
    r"instagram",
    r"linkedin",
    r"social media",
    r"status update",
    r"contacts?",
    r"phone ?book",
)
GENERAL_DOMAIN = (
    _words(
        r"posts?",
        r"call",
        r"dial",
        r"ring",
        r"lists?",
        r"to ?do",
        r"chores?",
        r"shopping",
        r"groceries",
        r"cart",
        r"order",
        r"amazon",
        r"wishlist",
        r"notes?",
        r"songs?",
        r"music",
        r"playlists?",
        r"album",
        r"artist",
        r"podcasts?",
        r"audiobooks?",
        r"radio",
        r"spotify",
        r"jokes?",
        r"recipes?",
        r"takeaway",
        r"uber",
        r"taxi",
        r"ticket",
    )
    + r"|\bplay\b.*\b(?:game|chess|crossword|quiz|trivia|cards)\b|\bgame of\b"
)
# Bookings and availability: no tool of ours books anything, and a date in them is no timer.
BOOKING = (
    r"\b(?:tickets?|reservations?|reserve|flights?|hotels?|airbnb|check(?:ing)? ?(?:in|out)|table for|"
    r"rent(?:al)? (?:a )?car|seats? (?:for|on|at))\b|\bbook (?:a|an|me|us|the|my|two|three|four)\b"
)
# Asking how to do something: knowledge, not news.
HOW_TO = (
    r"^(?:how (?:can|do|should|would|could|to) (?:i|we|you|one)?|how to|what(?:'s| is) the best way to)\b"
    r"|\b(?:tips|advice|steps) (?:for|on|to)\b"
)
# Asking what is on one's calendar: a calendar request (timer), not small talk.
CALENDAR_QUESTION = (
    r"\b(?:am i|are we|is \w+) (?:free|available|busy|booked)\b"
    r"|\bwhat(?:'s| is| does| do)? (?:on )?my (?:day|week|weekend|morning|afternoon|evening|"
    + _WEEKDAY
    + r"|"
    + _MONTH
    + r"|schedule|calendar)\b.*\b(?:look|like|have|hold)\b"
    r"|\bwhat do (?:i|we) have (?:on|going on|planned|scheduled|booked|today|tomorrow|this|next)\b"
    r"|\bdo (?:i|we) have (?:anything|something|plans) (?:on|planned|scheduled|today|tomorrow|this|next)\b"
)
QUESTION_KNOWLEDGE = (
    r"^(?:who|whom|whose|why|where|define|explain|spell|translate|calculate)\b"
    r"|^(?:what|which|how) .*\b(?:is|are|was|were|do|does|did)\b"
    r"|^what (?:is|are|was|were|does|do) (?:a|an|the)\b(?!.*\b(?:temperature|time|date|weather|"
    r"forecast|score|price)\b)"
    r"|\b(?:meaning of|definition of|capital of|how many \w+ (?:in|are in) a)\b"
)
